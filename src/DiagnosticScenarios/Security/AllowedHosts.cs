using Microsoft.AspNetCore.HostFiltering;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Primitives;

namespace DiagnosticScenarios.Security;

/// <summary>
/// <c>AllowedHosts</c> (the DNS-rebinding defence: <c>localhost;127.0.0.1;[::1]</c> by default), enforced for Kestrel and the
/// live page's own server alike, with the framework's matcher. A refused Host gets a 400 ProblemDetails whose <c>rule</c>
/// is <c>allowed-hosts</c>; the framework's own filter, which answers a bare HTML 400, is told to admit everything instead.
/// </summary>
public sealed class AllowedHosts
{
    public const string ConfigurationKey = "AllowedHosts";
    public const string Rule = "allowed-hosts";

    /// <summary>The names served when <c>AllowedHosts</c> is not set: this machine's loopback names only.</summary>
    public const string Default = "localhost;127.0.0.1;[::1]";

    private readonly StringSegment[] _patterns;

    public AllowedHosts(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        Configured = configuration[ConfigurationKey] is { Length: > 0 } hosts ? hosts : Default;
        _patterns = [.. Configured.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(p => new StringSegment(p))];
    }

    /// <summary>The setting as configured.</summary>
    public string Configured { get; }

    /// <summary>Whether a request with this <c>Host</c> header may be served; one without a Host (HTTP/1.0) may, as the framework's filter allows.</summary>
    public bool Allows(string? host) =>
        string.IsNullOrEmpty(host) || _patterns.Any(p => p == "*") || HostString.MatchesAny(new StringSegment(new HostString(host).Host), _patterns);

    /// <summary>The refusal's detail, the same on both servers.</summary>
    public string Refusal(string? host) =>
        $"The Host header '{host}' is not in {ConfigurationKey} ({Configured}); a page on another name may be rebinding DNS to this machine. Widen {ConfigurationKey} to the names you use (not *) to serve them.";
}

public static class AllowedHostsRegistration
{
    /// <summary>Our host filter in place of the framework's (see <see cref="AllowedHosts"/>).</summary>
    public static IServiceCollection AddAllowedHosts(this IServiceCollection services)
    {
        services.TryAddSingleton<AllowedHosts>();
        services.PostConfigure<HostFilteringOptions>(options => options.AllowedHosts = ["*"]);
        return services;
    }

    public static IApplicationBuilder UseAllowedHosts(this IApplicationBuilder app)
    {
        var hosts = app.ApplicationServices.GetRequiredService<AllowedHosts>();
        return app.Use(next => context =>
            hosts.Allows(context.Request.Headers.Host.ToString())
                ? next(context)
                : TypedResults.Problem(statusCode: StatusCodes.Status400BadRequest, title: "This Host is not served.",
                    detail: hosts.Refusal(context.Request.Headers.Host.ToString()), extensions: new Dictionary<string, object?> { ["rule"] = AllowedHosts.Rule })
                    .ExecuteAsync(context));
    }
}
