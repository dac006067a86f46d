using System.Collections.Concurrent;
using System.Diagnostics;

namespace DiagnosticScenarios.ThreadPoolHealth;

/// <summary>
/// Per-endpoint figures: requests in flight, requests holding their thread right now, completions,
/// latency, and how long each request held the thread it started on before it first yielded.
/// </summary>
public sealed class EndpointAttribution
{
    private readonly ConcurrentDictionary<string, EndpointStats> _endpoints = new(StringComparer.Ordinal);

    internal EndpointStats For(string route) => _endpoints.GetOrAdd(route, static r => new EndpointStats(r));

    internal IEnumerable<EndpointStats> All => _endpoints.Values;

    /// <summary>Endpoints ranked by how many threads they hold now, then by their recent hold time; only those that hold.</summary>
    public IReadOnlyList<EndpointSnapshot> TopHolders(int count) =>
        Snapshot()
            .Where(e => e.HoldingThread > 0 || e.HoldTime.P95Ms >= HoldingThresholdMs)
            .OrderByDescending(e => e.HoldingThread)
            .ThenByDescending(e => e.HoldTime.P95Ms)
            .Take(count)
            .ToList();

    public IReadOnlyList<EndpointSnapshot> Snapshot() =>
        _endpoints.Values.Select(e => e.Snapshot()).OrderBy(e => e.Route, StringComparer.Ordinal).ToList();

    /// <summary>A request that keeps its thread this long before yielding is treated as a holder (a blocking call, not CPU work).</summary>
    public const double HoldingThresholdMs = 50;
}

/// <summary>An endpoint's figures over the last 30 seconds.</summary>
public sealed record EndpointSnapshot(string Route, long InFlight, long HoldingThread, long Completed, Percentiles Latency, Percentiles HoldTime);

/// <summary>An endpoint's figures for one second of the stream.</summary>
public sealed record EndpointSecond(string Route, long InFlight, long HoldingThread, long Completed, double LatencyAvgMs, double LatencyMaxMs, double HoldAvgMs, double HoldMaxMs);

internal sealed class EndpointStats(string route)
{
    private readonly SlidingWindow _latency = new(TimeSpan.FromSeconds(30), 8192);
    private readonly SlidingWindow _hold = new(TimeSpan.FromSeconds(30), 8192);
    private readonly Lock _lock = new();
    private long _inFlight;
    private long _holding;
    private long _completed;
    private long _secondCount;
    private double _secondLatencySum;
    private double _secondLatencyMax;
    private double _secondHoldSum;
    private double _secondHoldMax;

    public string Route { get; } = route;

    public long Holding => Interlocked.Read(ref _holding);

    public void Entered()
    {
        Interlocked.Increment(ref _inFlight);
        Interlocked.Increment(ref _holding);
    }

    public void Yielded() => Interlocked.Decrement(ref _holding);

    public void Completed(double latencyMs, double holdMs)
    {
        _latency.Add(latencyMs);
        _hold.Add(holdMs);
        lock (_lock)
        {
            _completed++;
            _secondCount++;
            _secondLatencySum += latencyMs;
            _secondLatencyMax = Math.Max(_secondLatencyMax, latencyMs);
            _secondHoldSum += holdMs;
            _secondHoldMax = Math.Max(_secondHoldMax, holdMs);
        }

        Interlocked.Decrement(ref _inFlight);
    }

    public EndpointSnapshot Snapshot() =>
        new(Route, Interlocked.Read(ref _inFlight), Holding, Interlocked.Read(ref _completed), _latency.Snapshot(), _hold.Snapshot());

    /// <summary>The completions since the previous call; called once a second by the sampler.</summary>
    public EndpointSecond TakeSecond()
    {
        lock (_lock)
        {
            var count = _secondCount;
            var second = new EndpointSecond(
                Route,
                Interlocked.Read(ref _inFlight),
                Holding,
                count,
                count == 0 ? 0 : Math.Round(_secondLatencySum / count, 1),
                Math.Round(_secondLatencyMax, 1),
                count == 0 ? 0 : Math.Round(_secondHoldSum / count, 1),
                Math.Round(_secondHoldMax, 1));
            _secondCount = 0;
            _secondLatencySum = _secondLatencyMax = _secondHoldSum = _secondHoldMax = 0;
            return second;
        }
    }
}

/// <summary>
/// Times each routed request and how long it held its thread. The hold ends when the rest of the pipeline
/// first hands back a task that has not completed: until then this thread ran the request synchronously,
/// whether it computed or blocked. A sync action that blocks (taskwait, tasksleepwait, syncio) holds it for
/// the whole query; an action that awaits (taskasyncwait) hands it back within a millisecond.
/// <c>await Task.Run(blocking)</c> (taskrunwait) frees the request thread while it blocks another one, which
/// this measure cannot attribute; the queue delay still shows its effect.
/// </summary>
internal sealed class EndpointAttributionMiddleware(RequestDelegate next, EndpointAttribution attribution, HealthMetrics metrics)
{
    public async Task InvokeAsync(HttpContext context)
    {
        var route = RouteOf(context);
        if (route is null)
        {
            await next(context);
            return;
        }

        var stats = attribution.For(route);
        var started = Stopwatch.GetTimestamp();
        stats.Entered();
        Task pipeline;
        try
        {
            pipeline = next(context);
        }
#pragma warning disable CA1031 // deliberate: the exception is rethrown by the await below, after the figures are recorded
        catch (Exception exception)
#pragma warning restore CA1031
        {
            pipeline = Task.FromException(exception);
        }

        // Reached on return from next(): either the request is done or it has just yielded its thread.
        var holdMs = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
        stats.Yielded();

        try
        {
            await pipeline;
        }
        finally
        {
            stats.Completed(Stopwatch.GetElapsedTime(started).TotalMilliseconds, holdMs);
            metrics.RecordHoldTime(route, holdMs);
        }
    }

    // The route pattern, not the path, so /highcpu/10 and /highcpu/20 count as one endpoint.
    // The /api/threadpool group is left out: its stream is open for minutes by design.
    private static string? RouteOf(HttpContext context) =>
        context.GetEndpoint() is RouteEndpoint endpoint && endpoint.Metadata.GetMetadata<ExcludeFromAttribution>() is null
            ? "/" + endpoint.RoutePattern.RawText?.TrimStart('/')
            : null;
}

/// <summary>Endpoint metadata: not counted by the attribution (the health API and its long-lived stream).</summary>
internal sealed class ExcludeFromAttribution;
