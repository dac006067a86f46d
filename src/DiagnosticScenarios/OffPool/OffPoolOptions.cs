using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.OffPool;

/// <summary>Configuration section <c>OffPool</c>: the limits of each server on the app's own threads, the one place they are set.</summary>
public sealed class OffPoolOptions : IValidatableObject
{
    public const string SectionName = "OffPool";

    /// <summary>
    /// The live page's server: a browser opens up to six connections to an origin, so 64 fit a few pages, a scraper and
    /// tools; 16 of them may stream, 48 stay for the scrape, the snapshot and the page's files.
    /// </summary>
    public OffPoolLimits LivePage { get; set; } = new();

    /// <summary>
    /// The slow upstream of the blocking scenarios: the app's own client, up to the load runner's 500 connections with room
    /// for connections that close late. Nothing streams.
    /// </summary>
    public OffPoolLimits SlowUpstream { get; set; } = new() { MaxConnections = 1024, MaxStreams = 0 };

    /// <summary>
    /// The embedded TDS responder: sessions for the app's SqlClient pool (Max Pool Size 200) and a second client. A pooled
    /// session sits idle between batches for as long as the driver keeps it (it prunes idle ones within 4 to 8 minutes), so
    /// the idle timeout outlasts that. A session that has not logged in is shed first.
    /// </summary>
    public OffPoolLimits Tds { get; set; } = new() { MaxConnections = 256, MaxStreams = 0, IdleTimeout = TimeSpan.FromMinutes(10) };

    public IEnumerable<ValidationResult> Validate(ValidationContext validationContext) =>
        new[] { LivePage.Problem($"{SectionName}:{nameof(LivePage)}"), SlowUpstream.Problem($"{SectionName}:{nameof(SlowUpstream)}"), Tds.Problem($"{SectionName}:{nameof(Tds)}") }
            .OfType<string>().Select(p => new ValidationResult(p));
}

public static class OffPoolRegistration
{
    /// <summary>The <c>OffPool</c> limits, bound once however many servers ask for them.</summary>
    public static IServiceCollection AddOffPoolLimits(this IServiceCollection services, IConfiguration configuration)
    {
        if (services.Any(s => s.ServiceType == typeof(IConfigureOptions<OffPoolOptions>)))
        {
            return services;
        }

        services.AddOptions<OffPoolOptions>().Bind(configuration.GetSection(OffPoolOptions.SectionName)).ValidateDataAnnotations().ValidateOnStart();
        return services;
    }
}
