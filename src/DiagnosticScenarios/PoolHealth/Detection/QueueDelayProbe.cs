using System.Collections.Concurrent;
using System.Diagnostics;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// Measures how long a work item waits in the thread pool's queue before a thread picks it up.
/// The probe queues from a dedicated thread of its own: a probe that awaited on the pool would
/// report late exactly when the pool is starved.
/// </summary>
public sealed class QueueDelayProbe : IDisposable
{
    // Ten seconds at the default interval; bounds the bookkeeping when the pool runs nothing for minutes.
    private const int MaxOutstanding = 600;

    private readonly TimeSpan _interval;
    private readonly HealthMetrics _metrics;
    private readonly SlidingWindow _window = new(TimeSpan.FromSeconds(10), 1024);
    private readonly Lock _windowLock = new();
    private readonly ConcurrentDictionary<long, long> _outstanding = new();
    private readonly ManualResetEventSlim _stopping = new();
    private readonly Thread _thread;
    private long _sequence;
    private long _maxSinceLastTake;

    public QueueDelayProbe(IOptions<ThreadPoolHealthOptions> options, HealthMetrics metrics)
    {
        _interval = TimeSpan.FromMilliseconds(options.Value.ProbeIntervalMs);
        _metrics = metrics;
        _thread = new Thread(Run) { IsBackground = true, Name = "ThreadPoolHealth probe" };
    }

    public void Start() => _thread.Start();

    /// <summary>Percentiles of the delays measured over the last ten seconds.</summary>
    public Percentiles Window()
    {
        double[] recent;
        lock (_windowLock)
        {
            recent = _window.Recent(Stopwatch.GetTimestamp());
        }

        return Percentiles.Of(recent);
    }

    /// <summary>How long the oldest probe still in the queue has been waiting (0 when none is).</summary>
    public double OldestPendingMs()
    {
        var oldest = long.MaxValue;
        foreach (var (_, queuedAt) in _outstanding)
        {
            oldest = Math.Min(oldest, queuedAt);
        }

        return oldest == long.MaxValue ? 0 : Stopwatch.GetElapsedTime(oldest).TotalMilliseconds;
    }

    /// <summary>
    /// The worst delay since the previous call: the largest measured delay or, if larger, the age of a
    /// probe still waiting. Read once a second by the sampler, so a starved pool shows at once, not when it recovers.
    /// </summary>
    public double TakeWorstSinceLastTake()
    {
        var measured = BitConverter.Int64BitsToDouble(Interlocked.Exchange(ref _maxSinceLastTake, 0));
        return Math.Round(Math.Max(measured, OldestPendingMs()), 1);
    }

    public void Dispose()
    {
        _stopping.Set();
        if (_thread.IsAlive)
        {
            _thread.Join(TimeSpan.FromSeconds(2));
        }

        _stopping.Dispose();
    }

    private void Run()
    {
        while (!_stopping.Wait(_interval))
        {
            if (_outstanding.Count >= MaxOutstanding)
            {
                continue;
            }

            var id = ++_sequence;
            var queuedAt = Stopwatch.GetTimestamp();
            _outstanding[id] = queuedAt;
            ThreadPool.UnsafeQueueUserWorkItem(Started, (this, id, queuedAt), preferLocal: false);
        }
    }

    private static void Started((QueueDelayProbe Probe, long Id, long QueuedAt) item)
    {
        var now = Stopwatch.GetTimestamp();
        var delay = Stopwatch.GetElapsedTime(item.QueuedAt, now).TotalMilliseconds;
        var probe = item.Probe;
        probe._outstanding.TryRemove(item.Id, out _);
        lock (probe._windowLock)
        {
            probe._window.Add(now, delay);
        }

        probe._metrics.RecordQueueDelay(delay);

        RaiseTo(ref probe._maxSinceLastTake, delay);
    }

    // Lock-free "max = Math.Max(max, value)" on a double stored as its bits.
    private static void RaiseTo(ref long maxBits, double value)
    {
        var seen = Interlocked.Read(ref maxBits);
        while (value > BitConverter.Int64BitsToDouble(seen))
        {
            var previous = Interlocked.CompareExchange(ref maxBits, BitConverter.DoubleToInt64Bits(value), seen);
            if (previous == seen)
            {
                return;
            }

            seen = previous;
        }
    }
}
