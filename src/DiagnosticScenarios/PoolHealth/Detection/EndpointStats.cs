using System.Diagnostics;
using System.Numerics;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// One endpoint's counters and recent latencies, striped by processor: a request records into the stripe of the core it
/// runs on, so cores serving the same endpoint at full speed do not contend for one lock or one cache line. Reads (the
/// page, once a second) add the stripes up.
/// </summary>
internal sealed class EndpointStats
{
    private const int LatencyColumn = 0;
    private const int HoldColumn = 1;

    /// <summary>The 30-second window keeps at most this many requests across all stripes, whatever the rate.</summary>
    private const int WindowCapacity = 8192;

    private static readonly TimeSpan Window = TimeSpan.FromSeconds(30);

    private readonly Stripe[] _stripes;
    private readonly int _mask;

    public EndpointStats(string route)
    {
        Route = route;
        RouteTag = new("http.route", route);
        var count = (int)Math.Min(BitOperations.RoundUpToPowerOf2((uint)Environment.ProcessorCount), 16);
        _mask = count - 1;
        _stripes = new Stripe[count];
        for (var i = 0; i < count; i++)
        {
            _stripes[i] = new Stripe(WindowCapacity / count);
        }
    }

    public string Route { get; }

    /// <summary>The meter's tag for this endpoint, built once.</summary>
    public KeyValuePair<string, object?> RouteTag { get; }

    public long Holding => Sum(static s => Interlocked.Read(ref s.Holding));

    public void Entered()
    {
        var stripe = Current;
        Interlocked.Increment(ref stripe.InFlight);
        Interlocked.Increment(ref stripe.Holding);
    }

    // A request may enter on one core and yield or complete on another: a stripe's own count can go below zero, their sum cannot.
    public void Yielded() => Interlocked.Decrement(ref Current.Holding);

    public void Completed(long now, double latencyMs, double holdMs)
    {
        var stripe = Current;
        lock (stripe.Lock)
        {
            stripe.Window.Add(now, latencyMs, holdMs);
            stripe.Completed++;
            stripe.SecondCount++;
            stripe.SecondLatencySum += latencyMs;
            stripe.SecondLatencyMax = Math.Max(stripe.SecondLatencyMax, latencyMs);
            stripe.SecondHoldSum += holdMs;
            stripe.SecondHoldMax = Math.Max(stripe.SecondHoldMax, holdMs);
        }

        Interlocked.Decrement(ref stripe.InFlight);
    }

    public EndpointSnapshot Snapshot()
    {
        var now = Stopwatch.GetTimestamp();
        var latency = new List<double>();
        var hold = new List<double>();
        long completed = 0;
        foreach (var stripe in _stripes)
        {
            lock (stripe.Lock)
            {
                latency.AddRange(stripe.Window.Recent(now, LatencyColumn));
                hold.AddRange(stripe.Window.Recent(now, HoldColumn));
                completed += stripe.Completed;
            }
        }

        return new(Route, Sum(static s => Interlocked.Read(ref s.InFlight)), Holding, completed, Percentiles.Of([.. latency]), Percentiles.Of([.. hold]));
    }

    /// <summary>The completions since the previous call; called once a second by the sampler.</summary>
    public EndpointSecond TakeSecond()
    {
        long count = 0;
        double latencySum = 0, latencyMax = 0, holdSum = 0, holdMax = 0;
        foreach (var stripe in _stripes)
        {
            lock (stripe.Lock)
            {
                count += stripe.SecondCount;
                latencySum += stripe.SecondLatencySum;
                latencyMax = Math.Max(latencyMax, stripe.SecondLatencyMax);
                holdSum += stripe.SecondHoldSum;
                holdMax = Math.Max(holdMax, stripe.SecondHoldMax);
                stripe.SecondCount = 0;
                stripe.SecondLatencySum = stripe.SecondLatencyMax = stripe.SecondHoldSum = stripe.SecondHoldMax = 0;
            }
        }

        return new EndpointSecond(
            Route,
            Sum(static s => Interlocked.Read(ref s.InFlight)),
            Holding,
            count,
            count == 0 ? 0 : Math.Round(latencySum / count, 1),
            Math.Round(latencyMax, 1),
            count == 0 ? 0 : Math.Round(holdSum / count, 1),
            Math.Round(holdMax, 1));
    }

    private Stripe Current => _stripes[Thread.GetCurrentProcessorId() & _mask];

    private long Sum(Func<Stripe, long> read)
    {
        long sum = 0;
        foreach (var stripe in _stripes)
        {
            sum += read(stripe);
        }

        return sum;
    }

    /// <summary>
    /// One core's share. Each is its own object with its window's arrays allocated right after it, so two stripes' counters
    /// never share a cache line.
    /// </summary>
    private sealed class Stripe(int windowCapacity)
    {
        public readonly Lock Lock = new();
        public readonly SlidingWindow Window = new(EndpointStats.Window, windowCapacity, columns: 2);
        public long InFlight;
        public long Holding;
        public long Completed;
        public long SecondCount;
        public double SecondLatencySum;
        public double SecondLatencyMax;
        public double SecondHoldSum;
        public double SecondHoldMax;
    }
}
