using System.Diagnostics;
using DiagnosticScenarios.BlockingAnalysis;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// The detector. Once a second, on a dedicated thread, it takes a <see cref="HealthSample"/>, decides by
/// <see cref="StarvationRule"/> whether the pool is starved, raises <see cref="StarvationDeclared"/> to the
/// <see cref="IStarvationListener"/>s (the log line, the stack capture), and then records the sample into a ring buffer,
/// which the page's stream and the API read. Sampling off the pool keeps the series whole while the pool is starved.
/// Starts the probe and the meter's observable instruments with the app.
/// </summary>
public sealed class HealthSampler : IHostedService, IDisposable
{
    private static readonly TimeSpan SampleInterval = TimeSpan.FromSeconds(1);

    private readonly ThreadPoolHealthOptions _options;
    private readonly QueueDelayProbe _probe;
    private readonly EndpointAttribution _attribution;
    private readonly HealthMetrics _metrics;
    private readonly ThreadInjectionListener _injections;
    private readonly IPoolCounters _counters;
    private readonly IReadOnlyList<IStarvationListener> _listeners;
    private readonly StarvationRule _rule = StarvationRule.Default;
    private readonly Queue<PoolSecond> _window = new();
    private readonly HealthSample?[] _ring;
    private readonly Lock _ringLock = new();

    // Pulsed when a sample is in the ring, for the app's own threads that block until the next one (the live page's stream).
    private readonly object _sampled = new();
    private readonly ManualResetEventSlim _stopping = new();
    private readonly Thread _sampler;
    private TaskCompletionSource _nextSample = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _sequence;
    private readonly StarvationThrottle _throttle;

    public HealthSampler(
        IOptions<ThreadPoolHealthOptions> options,
        QueueDelayProbe probe,
        EndpointAttribution attribution,
        HealthMetrics metrics,
        ThreadInjectionListener injections,
        IPoolCounters counters,
        IEnumerable<IStarvationListener> listeners)
    {
        ArgumentNullException.ThrowIfNull(options);
        _options = options.Value;
        _probe = probe;
        _attribution = attribution;
        _metrics = metrics;
        _injections = injections;
        _counters = counters;
        _listeners = [.. listeners];
        _ring = new HealthSample?[_options.HistorySeconds];
        _throttle = new StarvationThrottle(TimeSpan.FromSeconds(_options.StarvationEventIntervalSeconds));
        _sampler = new Thread(Run) { IsBackground = true, Name = "ThreadPoolHealth sampler" };
    }

    /// <summary>This run of the app, as its samples carry it (<see cref="HealthSample.RunId"/>).</summary>
    public long RunId { get; } = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

    public long LatestSequence
    {
        get
        {
            lock (_ringLock)
            {
                return _sequence;
            }
        }
    }

    /// <summary>The latest sample, or null before the first second has passed.</summary>
    public HealthSample? Latest
    {
        get
        {
            lock (_ringLock)
            {
                return _sequence == 0 ? null : _ring[_sequence % _ring.Length];
            }
        }
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        _metrics.Observe(_probe, _injections, _attribution);
        _probe.Start();
        _sampler.Start();
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        _stopping.Set();
        return Task.CompletedTask;
    }

    public void Dispose()
    {
        _stopping.Set();
        if (_sampler.IsAlive)
        {
            _sampler.Join(TimeSpan.FromSeconds(2));
        }

        _stopping.Dispose();
    }

    /// <summary>Completes when the next sample is in the ring.</summary>
    public Task NextSample()
    {
        lock (_ringLock)
        {
#pragma warning disable VSTHRD003 // deliberate: the sampler thread completes it, with continuations forced off that thread; no context to deadlock on
            return _nextSample.Task;
#pragma warning restore VSTHRD003
        }
    }

    /// <summary>Blocks the calling thread (one of the app's own, never the pool's) until a sample after <paramref name="afterSequence"/> is in the ring, or the timeout passes.</summary>
    public bool WaitForSampleAfter(long afterSequence, TimeSpan timeout)
    {
        var deadline = Stopwatch.GetTimestamp() + (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        lock (_sampled)
        {
            while (LatestSequence <= afterSequence)
            {
                var left = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), deadline);
                if (left <= TimeSpan.Zero || !Monitor.Wait(_sampled, left))
                {
                    return LatestSequence > afterSequence;
                }
            }

            return true;
        }
    }

    /// <summary>The samples after <paramref name="afterSequence"/> still in the ring, oldest first.</summary>
    public IReadOnlyList<HealthSample> SamplesAfter(long afterSequence)
    {
        lock (_ringLock)
        {
            var first = Math.Max(afterSequence + 1, Math.Max(1, _sequence - _ring.Length + 1));
            var samples = new List<HealthSample>((int)Math.Max(0, _sequence - first + 1));
            for (var s = first; s <= _sequence; s++)
            {
                samples.Add(_ring[s % _ring.Length]!);
            }

            return samples;
        }
    }

    private void Run()
    {
        var next = Stopwatch.GetTimestamp();
        while (true)
        {
            // Fixed-rate, not fixed-delay: a slow sample does not shift every later one.
            next += (long)(SampleInterval.TotalSeconds * Stopwatch.Frequency);
            var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), next);
            if (_stopping.Wait(wait > TimeSpan.Zero ? wait : TimeSpan.Zero))
            {
                return;
            }

            TakeSample();
        }
    }

    private void TakeSample()
    {
        var now = Stopwatch.GetTimestamp();
        var second = _counters.TakeSecond();

        _window.Enqueue(second);
        while (_window.Count > _rule.WindowSeconds)
        {
            _window.Dequeue();
        }

        var verdict = _rule.Evaluate([.. _window]);
        var endpoints = _attribution.All.Select(e => e.TakeSecond()).OrderBy(e => e.Route, StringComparer.Ordinal).ToList();

        // Only this thread writes the sequence.
        var sample = new HealthSample(
            RunId,
            _sequence + 1,
            DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
            second.ThreadCount,
            second.QueueLength,
            (long)Math.Round(second.CompletedPerSecond),
            second.CpuPercent,
            MinThreads.Now().Workers,
            _probe.TakeWorstSinceLastTake(),
            verdict.Starved,
            verdict.Reason,
            _injections.Counts(),
            endpoints);

        // The event before the sample: whoever acts on a starved sample (the page's Capture now, a monitor's POST) then finds
        // the detector's capture already queued and joins it. Published first, a POST read from it could queue a capture of
        // its own first, which the event would join, and the detector's capture, throttled, would not be taken in this run.
        Declare(sample, verdict, now);

        TaskCompletionSource reached;
        lock (_ringLock)
        {
            _ring[sample.Sequence % _ring.Length] = sample;
            _sequence = sample.Sequence;
            reached = _nextSample;
            _nextSample = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        reached.SetResult();
        lock (_sampled)
        {
            Monitor.PulseAll(_sampled);
        }
    }

    // One event, one throttle: at most once per interval, however the starved seconds fall.
    private void Declare(HealthSample sample, StarvationVerdict verdict, long now)
    {
        if (!_throttle.Raises(verdict.Starved, Stopwatch.GetElapsedTime(0, now)))
        {
            return;
        }

        var declared = new StarvationDeclared(sample, verdict);
        foreach (var listener in _listeners)
        {
            listener.OnStarvation(declared);
        }
    }
}
