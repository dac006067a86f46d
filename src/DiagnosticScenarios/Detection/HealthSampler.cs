using System.Diagnostics;
using DiagnosticScenarios.StackCapture;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Detection;

/// <summary>
/// Records one <see cref="HealthSample"/> a second into a ring buffer, on a dedicated thread: sampling off the pool
/// keeps the series whole while the pool is starved, and the stream catches up from the ring when its turn comes.
/// Starts the queue-delay probe and the meter's observable instruments with the app.
/// </summary>
public sealed class HealthSampler : IHostedService, IDisposable
{
    private static readonly TimeSpan SampleInterval = TimeSpan.FromSeconds(1);

    private readonly ThreadPoolHealthOptions _options;
    private readonly QueueDelayProbe _probe;
    private readonly EndpointAttribution _attribution;
    private readonly HealthMetrics _metrics;
    private readonly StarvationLog _starvationLog;
    private readonly StackCaptureService _stackCapture;
    private readonly HealthSample?[] _ring;
    private readonly Lock _ringLock = new();
    private readonly ManualResetEventSlim _stopping = new();
    private readonly Thread _sampler;
    private TaskCompletionSource _nextSample = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _sequence;
    private long _lastCompletedWorkItems;

    public HealthSampler(IOptions<ThreadPoolHealthOptions> options, QueueDelayProbe probe, EndpointAttribution attribution, HealthMetrics metrics, StarvationLog starvationLog, StackCaptureService stackCapture)
    {
        _stackCapture = stackCapture;
        _options = options.Value;
        _probe = probe;
        _attribution = attribution;
        _metrics = metrics;
        _starvationLog = starvationLog;
        _ring = new HealthSample?[_options.HistorySeconds];
        _sampler = new Thread(Run) { IsBackground = true, Name = "ThreadPoolHealth sampler" };
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        _metrics.Observe(_probe, ThreadInjectionListener.Shared, _attribution);
        _lastCompletedWorkItems = ThreadPool.CompletedWorkItemCount;
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
        var completed = ThreadPool.CompletedWorkItemCount;
        var queueDelay = _probe.TakeWorstSinceLastTake();
        var starved = queueDelay >= _options.StarvationThresholdMs;
        var endpoints = _attribution.All.Select(e => e.TakeSecond()).OrderBy(e => e.Route, StringComparer.Ordinal).ToList();

        TaskCompletionSource reached;
        lock (_ringLock)
        {
            var sample = new HealthSample(
                _sequence + 1,
                DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
                ThreadPool.ThreadCount,
                ThreadPool.PendingWorkItemCount,
                completed - _lastCompletedWorkItems,
                MinThreads.Now().Workers,
                queueDelay,
                starved,
                ThreadInjectionListener.Shared.Counts(),
                endpoints);
            _ring[sample.Sequence % _ring.Length] = sample;
            _sequence = sample.Sequence;
            reached = _nextSample;
            _nextSample = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        _lastCompletedWorkItems = completed;
        reached.SetResult();

        if (starved)
        {
            _starvationLog.Warn(queueDelay);
            _stackCapture.OnStarvation();
        }
    }
}
