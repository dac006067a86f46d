using System.Collections.Concurrent;

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

    internal IEnumerable<EndpointStats> All => _byRoute.Values;

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
