using System.Net;
using DiagnosticScenarios.Security;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.PoolHealth.Controls;

/// <summary>Who may use the controls that change the whole process, from the <c>Controls</c> section of configuration.</summary>
public sealed class ControlGateOptions
{
    public const string SectionName = "Controls";

    /// <summary>
    /// Lets clients from any address, with any <c>Host</c> that <c>AllowedHosts</c> admits, use the controls.
    /// Off by default; a container whose port is mapped to the host needs it, since its clients arrive from the bridge.
    /// The cross-site rules hold either way.
    /// </summary>
    public bool AllowRemoteClients { get; set; }
}

/// <summary>
/// The one gate in front of every control that changes the process (the workaround, the load control, a stack capture):
/// a loopback client, a loopback <c>Host</c>, and a request no foreign web page can send without a preflight.
/// </summary>
public static class ControlGate
{
    /// <summary>The header the page sends with every control call; a form post or an <c>&lt;img&gt;</c> cannot carry it.</summary>
    public const string HeaderName = "X-DiagnosticScenarios-Control";

    /// <summary>The CORS policy that lets the live page, served from its own port, call the controls; no other origin.</summary>
    public const string LivePagePolicy = "live-page";

    /// <summary>
    /// What the gate needs: its options, bound from <c>Controls</c>, and the live page's CORS policy (from Infrastructure's
    /// <see cref="AppOrigins"/>). Every feature with a control calls it; registered twice, it is the same gate.
    /// </summary>
    public static IServiceCollection AddControlGate(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddOptions<ControlGateOptions>().Bind(configuration.GetSection(ControlGateOptions.SectionName));
        services.TryAddSingleton<AppOrigins>();
        services.AddCors();
        services.AddOptions<Microsoft.AspNetCore.Cors.Infrastructure.CorsOptions>().Configure<AppOrigins>((cors, origins) =>
            cors.AddPolicy(LivePagePolicy, policy => policy
                .SetIsOriginAllowed(origins.IsLivePage)
                .WithHeaders(HeaderName, "Content-Type")
                .WithMethods("GET", "POST", "PUT", "DELETE")));
        return services;
    }

    /// <summary>
    /// Puts the gate in front of an endpoint or every endpoint of a group, with the live page's CORS policy: the page,
    /// served off the pool on a server of its own, calls every control on the app from its own origin.
    /// </summary>
    public static TBuilder RequireControlGate<TBuilder>(this TBuilder builder)
        where TBuilder : IEndpointConventionBuilder =>
        builder.AddEndpointFilter<TBuilder, ControlGateFilter>()
            .RequireCors(LivePagePolicy)
            .ProducesProblem(StatusCodes.Status403Forbidden);

    /// <summary>The first rule the request breaks, or null when it may pass.</summary>
    /// <param name="request">What the gate reads of the request, from Kestrel or from the live page's own server.</param>
    /// <param name="options">The gate's options.</param>
    /// <param name="origins">The app's own origins besides the request's: the live page's.</param>
    public static ControlGateRefusal? Check(ControlRequest request, ControlGateOptions options, AppOrigins origins)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(origins);

        if (!options.AllowRemoteClients)
        {
            if (request.RemoteAddress is not { } remote || !IPAddress.IsLoopback(remote))
            {
                return new("loopback-client", "Only from this machine.",
                    $"The client address {request.RemoteAddress?.ToString() ?? "(none)"} is not a loopback address.");
            }

            if (!AppOrigins.IsLoopbackName(request.Host.Host))
            {
                return new("loopback-host", "Only for a loopback Host.",
                    $"The Host header '{request.Host}' is not localhost, 127.0.0.1 or [::1]; a page on another name may be rebinding DNS to this machine.");
            }
        }

        if (!request.HasControlHeader && !IsJson(request.ContentType))
        {
            return new("preflight", "Only from a request that needs a CORS preflight.",
                $"Send the {HeaderName} header (the page does) or a JSON body; a form post or an <img> from a foreign page can send neither.");
        }

        if (request.Origin is { Length: > 0 } origin && !request.IsSameOrigin(origin) && !origins.IsLivePage(origin))
        {
            return new("same-origin", "Only from this app's own pages.",
                $"The Origin '{origin}' is neither {request.Scheme}://{request.Host} nor the live page's.");
        }

        return null;
    }

    private static bool IsJson(string? contentType) =>
        contentType is not null
        && Microsoft.Net.Http.Headers.MediaTypeHeaderValue.TryParse(contentType, out var media)
        && media.MediaType.Equals("application/json", StringComparison.OrdinalIgnoreCase);
}

/// <summary>What the gate reads of a request, whichever server received it.</summary>
/// <param name="RemoteAddress">The client's address.</param>
/// <param name="Host">The <c>Host</c> header.</param>
/// <param name="Scheme">http or https.</param>
/// <param name="HasControlHeader">Whether it carries <see cref="ControlGate.HeaderName"/>.</param>
/// <param name="ContentType">Its <c>Content-Type</c>, if any.</param>
/// <param name="Origin">Its <c>Origin</c>, if any.</param>
public readonly record struct ControlRequest(IPAddress? RemoteAddress, HostString Host, string Scheme, bool HasControlHeader, string? ContentType, string? Origin)
{
    public static ControlRequest From(HttpRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        return new(request.HttpContext.Connection.RemoteIpAddress, request.Host, request.Scheme, request.Headers.ContainsKey(ControlGate.HeaderName),
            request.ContentType, request.Headers.Origin.ToString());
    }

    /// <summary>Whether <paramref name="origin"/> is this request's own scheme, host and port.</summary>
    public bool IsSameOrigin(string origin) =>
        Uri.TryCreate(origin, UriKind.Absolute, out var uri)
        && string.Equals(uri.Scheme, Scheme, StringComparison.OrdinalIgnoreCase)
        && string.Equals(uri.Host, Host.Host, StringComparison.OrdinalIgnoreCase)
        && uri.Port == (Host.Port ?? (Scheme == "https" ? 443 : 80));
}

/// <summary>Which rule of the control gate a request broke, and why.</summary>
public sealed record ControlGateRefusal(string Rule, string Title, string Detail)
{
    /// <summary>The 403 answer, naming the rule, on the app and on the live page's server alike.</summary>
    public Microsoft.AspNetCore.Mvc.ProblemDetails ToProblem(string method, string path) => new()
    {
        Status = StatusCodes.Status403Forbidden,
        Title = Title,
        Detail = $"{method} {path} is a control. {Detail} " +
                 $"Clients elsewhere are let in only by {ControlGateOptions.SectionName}:{nameof(ControlGateOptions.AllowRemoteClients)}=true.",
        Instance = path,
        Extensions = { ["rule"] = Rule },
    };
}

/// <summary>Answers 403 ProblemDetails naming the rule a control request broke; lets the rest through.</summary>
public sealed class ControlGateFilter(IOptionsMonitor<ControlGateOptions> options, AppOrigins origins) : IEndpointFilter
{
    public ValueTask<object?> InvokeAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(next);

        var request = context.HttpContext.Request;
        if (ControlGate.Check(ControlRequest.From(request), options.CurrentValue, origins) is not { } refusal)
        {
            return next(context);
        }

        return ValueTask.FromResult<object?>(TypedResults.Problem(refusal.ToProblem(request.Method, request.Path)));
    }
}
