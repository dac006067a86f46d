using System.Net;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Controls;

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

    /// <summary>The gate's options, bound from <c>Controls</c>.</summary>
    public static IServiceCollection AddControlGate(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddOptions<ControlGateOptions>().Bind(configuration.GetSection(ControlGateOptions.SectionName));
        return services;
    }

    /// <summary>Puts the gate in front of an endpoint or every endpoint of a group.</summary>
    public static TBuilder RequireControlGate<TBuilder>(this TBuilder builder)
        where TBuilder : IEndpointConventionBuilder =>
        builder.AddEndpointFilter<TBuilder, ControlGateFilter>()
            .ProducesProblem(StatusCodes.Status403Forbidden);

    /// <summary>The first rule the request breaks, or null when it may pass.</summary>
    public static ControlGateRefusal? Check(HttpRequest request, ControlGateOptions options)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(options);

        if (!options.AllowRemoteClients)
        {
            if (request.HttpContext.Connection.RemoteIpAddress is not { } remote || !IPAddress.IsLoopback(remote))
            {
                return new("loopback-client", "Only from this machine.",
                    $"The client address {request.HttpContext.Connection.RemoteIpAddress?.ToString() ?? "(none)"} is not a loopback address.");
            }

            if (!IsLoopbackName(request.Host.Host))
            {
                return new("loopback-host", "Only for a loopback Host.",
                    $"The Host header '{request.Host}' is not localhost, 127.0.0.1 or [::1]; a page on another name may be rebinding DNS to this machine.");
            }
        }

        if (!request.Headers.ContainsKey(HeaderName) && !IsJson(request.ContentType))
        {
            return new("preflight", "Only from a request that needs a CORS preflight.",
                $"Send the {HeaderName} header (the page does) or a JSON body; a form post or an <img> from a foreign page can send neither.");
        }

        var origin = request.Headers.Origin.ToString();
        if (origin.Length > 0 && !IsSameOrigin(origin, request))
        {
            return new("same-origin", "Only from this app's own pages.",
                $"The Origin '{origin}' is not {request.Scheme}://{request.Host}.");
        }

        return null;
    }

    private static bool IsLoopbackName(string host) =>
        string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase)
        || IPAddress.TryParse(host, out var address) && IPAddress.IsLoopback(address);

    private static bool IsJson(string? contentType) =>
        contentType is not null
        && Microsoft.Net.Http.Headers.MediaTypeHeaderValue.TryParse(contentType, out var media)
        && media.MediaType.Equals("application/json", StringComparison.OrdinalIgnoreCase);

    private static bool IsSameOrigin(string origin, HttpRequest request) =>
        Uri.TryCreate(origin, UriKind.Absolute, out var uri)
        && string.Equals(uri.Scheme, request.Scheme, StringComparison.OrdinalIgnoreCase)
        && string.Equals(uri.Host, request.Host.Host, StringComparison.OrdinalIgnoreCase)
        && uri.Port == (request.Host.Port ?? (request.IsHttps ? 443 : 80));
}

/// <summary>Which rule of the control gate a request broke, and why.</summary>
public sealed record ControlGateRefusal(string Rule, string Title, string Detail);

/// <summary>Answers 403 ProblemDetails naming the rule a control request broke; lets the rest through.</summary>
public sealed class ControlGateFilter(IOptionsMonitor<ControlGateOptions> options) : IEndpointFilter
{
    public ValueTask<object?> InvokeAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(next);

        var request = context.HttpContext.Request;
        if (ControlGate.Check(request, options.CurrentValue) is not { } refusal)
        {
            return next(context);
        }

        var problem = TypedResults.Problem(
            statusCode: StatusCodes.Status403Forbidden,
            title: refusal.Title,
            detail: $"{request.Method} {request.Path} changes the whole process. {refusal.Detail} " +
                    $"Clients elsewhere are let in only by {ControlGateOptions.SectionName}:{nameof(ControlGateOptions.AllowRemoteClients)}=true.",
            extensions: new Dictionary<string, object?> { ["rule"] = refusal.Rule });
        return ValueTask.FromResult<object?>(problem);
    }
}
