using System.Collections.Concurrent;
using System.Reflection;
using DiagnosticScenarios.BlockingAnalysis;
using Microsoft.AspNetCore.Mvc.Controllers;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// Per-endpoint figures: requests in flight, requests holding their thread right now, completions,
/// latency, and how long each request held the thread it started on before it first yielded.
/// </summary>
public sealed class EndpointAttribution
{
    /// <summary>A request that keeps its thread this long before yielding is treated as a holder (a blocking call, not CPU work).</summary>
    public const double HoldingThresholdMs = 50;

    private readonly ConcurrentDictionary<string, EndpointStats> _byRoute = new(StringComparer.Ordinal);

    // The per-request lookup: by the endpoint object itself (reference equality), so a request builds no string and
    // hashes none. Null marks an endpoint that is not counted.
    private readonly ConcurrentDictionary<Endpoint, EndpointStats?> _byEndpoint = new();

    // What a stack capture names each endpoint's threads by: its display name and the method it runs, built once per endpoint.
    private readonly ConcurrentDictionary<Endpoint, EndpointLabel> _labels = new();

    internal IEnumerable<EndpointStats> All => _byRoute.Values;

    /// <summary>The endpoint as a stack capture names a thread that runs it: ASP.NET Core's name for it and, from its metadata, its method.</summary>
    internal EndpointLabel LabelOf(Endpoint endpoint) =>
        _labels.TryGetValue(endpoint, out var label) ? label : _labels.GetOrAdd(endpoint, static e => new EndpointLabel(e.DisplayName ?? e.ToString() ?? "", MethodOf(e)));

    // A controller action's method, or a minimal API handler's, whose IL a capture reads for the line of a call the JIT
    // inlined away; null when the endpoint names none, or its module has no file (a single-file bundle).
    private static EndpointMethod? MethodOf(Endpoint endpoint)
    {
        var method = endpoint.Metadata.GetMetadata<ControllerActionDescriptor>()?.MethodInfo ?? endpoint.Metadata.GetMetadata<MethodInfo>();
        return method is not null && Path.IsPathRooted(method.Module.FullyQualifiedName)
            ? new EndpointMethod(method.Module.FullyQualifiedName, method.MetadataToken)
            : null;
    }

    /// <summary>The figures of an endpoint, created on its first request; null for an endpoint left out of the attribution.</summary>
    internal EndpointStats? For(Endpoint endpoint) =>
        _byEndpoint.TryGetValue(endpoint, out var stats) ? stats : _byEndpoint.GetOrAdd(endpoint, Create);

    /// <summary>Endpoints ranked by how many threads they hold now, then by their recent hold time; only those that hold.</summary>
    public IReadOnlyList<EndpointSnapshot> TopHolders(int count) =>
        Snapshot()
            .Where(e => e.HoldingThread > 0 || e.HoldTime.P95Ms >= HoldingThresholdMs)
            .OrderByDescending(e => e.HoldingThread)
            .ThenByDescending(e => e.HoldTime.P95Ms)
            .Take(count)
            .ToList();

    public IReadOnlyList<EndpointSnapshot> Snapshot() =>
        _byRoute.Values.Select(e => e.Snapshot()).OrderBy(e => e.Route, StringComparer.Ordinal).ToList();

    // The route pattern, not the path, so /highcpu/10 and /highcpu/20 count as one endpoint.
    // Tooling endpoints are left out: the page's stream is open for minutes by design.
    private EndpointStats? Create(Endpoint endpoint) =>
        endpoint is RouteEndpoint route && route.Metadata.GetMetadata<ExcludeFromAttribution>() is null
            ? _byRoute.GetOrAdd("/" + route.RoutePattern.RawText?.TrimStart('/'), static r => new EndpointStats(r))
            : null;
}

/// <summary>Endpoint metadata: not counted by the attribution (the page's API, its stream, the controls, the catalogue).</summary>
public sealed class ExcludeFromAttribution
{
    public static ExcludeFromAttribution Instance { get; } = new();

    private ExcludeFromAttribution()
    {
    }
}

/// <summary>An endpoint's figures over the last 30 seconds.</summary>
public sealed record EndpointSnapshot(string Route, long InFlight, long HoldingThread, long Completed, Percentiles Latency, Percentiles HoldTime);

/// <summary>An endpoint's figures for one second of the stream.</summary>
public sealed record EndpointSecond(string Route, long InFlight, long HoldingThread, long Completed, double LatencyAvgMs, double LatencyMaxMs, double HoldAvgMs, double HoldMaxMs);
