using DiagnosticScenarios.Detection;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.LivePage;

/// <summary>The live page at <c>/</c> and the read-only API it reads: <c>/api/threadpool</c> and its stream.</summary>
public static class LivePageEndpoints
{
    /// <summary>The page always; its API when <c>ThreadPoolHealth:Enabled</c> is true.</summary>
    public static WebApplication MapLivePage(this WebApplication app)
    {
        app.UseDefaultFiles();
        app.UseStaticFiles();
        if (!app.Services.GetRequiredService<IOptions<ThreadPoolHealthOptions>>().Value.Enabled)
        {
            return app;
        }

        // The page's own polling and stream are tooling, not the app's load: left out of the attribution.
        var api = app.MapGroup("/api/threadpool").WithTags("ThreadPoolHealth").WithMetadata(ExcludeFromAttribution.Instance);

        api.MapGet("", (QueueDelayProbe probe, EndpointAttribution attribution, IOptions<ThreadPoolHealthOptions> options) =>
                TypedResults.Ok(HealthSnapshot.Take(probe, attribution, options.Value)))
            .WithSummary("A snapshot of the thread pool, the queue-delay probe, thread injections by reason, and per-endpoint figures.");

        api.MapGet("/stream", HealthStream.Open)
            .WithSummary("Server-sent events, one sample a second; send Last-Event-ID (or ?after=) to receive what was missed.");

        return app;
    }
}
