using System.Diagnostics;

namespace DiagnosticScenarios.Detection;

/// <summary>
/// One endpoint's counters and recent latencies. A completed request takes one lock, held for a few stores: the
/// 30-second window and this second's sums share it.
/// </summary>
internal sealed class EndpointStats(string route)
{
    private const int LatencyColumn = 0;
    private const int HoldColumn = 1;

    private readonly SlidingWindow _window = new(TimeSpan.FromSeconds(30), 8192, columns: 2);
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

    /// <summary>The meter's tag for this endpoint, built once.</summary>
    public KeyValuePair<string, object?> RouteTag { get; } = new("http.route", route);

    public long Holding => Interlocked.Read(ref _holding);

    public void Entered()
    {
        Interlocked.Increment(ref _inFlight);
        Interlocked.Increment(ref _holding);
    }

    public void Yielded() => Interlocked.Decrement(ref _holding);

    public void Completed(long now, double latencyMs, double holdMs)
    {
        lock (_lock)
        {
            _window.Add(now, latencyMs, holdMs);
            _completed++;
            _secondCount++;
            _secondLatencySum += latencyMs;
            _secondLatencyMax = Math.Max(_secondLatencyMax, latencyMs);
            _secondHoldSum += holdMs;
            _secondHoldMax = Math.Max(_secondHoldMax, holdMs);
        }

        Interlocked.Decrement(ref _inFlight);
    }

    public EndpointSnapshot Snapshot()
    {
        var now = Stopwatch.GetTimestamp();
        double[] latency, hold;
        long completed;
        lock (_lock)
        {
            latency = _window.Recent(now, LatencyColumn);
            hold = _window.Recent(now, HoldColumn);
            completed = _completed;
        }

        return new(Route, Interlocked.Read(ref _inFlight), Holding, completed, Percentiles.Of(latency), Percentiles.Of(hold));
    }

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
