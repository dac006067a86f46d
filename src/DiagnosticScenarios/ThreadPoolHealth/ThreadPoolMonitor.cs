using System.Diagnostics;
using DiagnosticScenarios.StackCapture;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.ThreadPoolHealth;

/// <summary>
/// Owns the detector: the queue-delay probe, the injection listener, and a sampler on a dedicated thread
/// that records one <see cref="HealthSample"/> a second into a ring buffer. Sampling off the pool keeps the
/// series whole while the pool is starved; the stream catches up from the ring when its turn comes.
/// </summary>
public sealed partial class ThreadPoolMonitor : IHostedService, IDisposable
{
    private static readonly TimeSpan SampleInterval = TimeSpan.FromSeconds(1);

    private readonly ThreadPoolHealthOptions _options;
    private readonly EndpointAttribution _attribution;
    private readonly ILogger<ThreadPoolMonitor> _logger;
    private readonly StackCaptureService _stackCapture;
    private readonly QueueDelayProbe _probe;
    private readonly HealthSample?[] _ring;
    private readonly Lock _ringLock = new();
    private readonly ManualResetEventSlim _stopping = new();
    private readonly Thread _sampler;
    private TaskCompletionSource _nextSample = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _sequence;
    private long _lastWarning = long.MinValue;
    private long _lastCompletedWorkItems;

    public ThreadPoolMonitor(IOptions<ThreadPoolHealthOptions> options, EndpointAttribution attribution, HealthMetrics metrics, ILogger<ThreadPoolMonitor> logger, StackCaptureService stackCapture)
    {
        _stackCapture = stackCapture;
        _options = options.Value;
        _attribution = attribution;
        _logger = logger;
        _probe = new QueueDelayProbe(TimeSpan.FromMilliseconds(_options.ProbeIntervalMs), metrics);
        _ring = new HealthSample?[_options.HistorySeconds];
        _sampler = new Thread(Run) { IsBackground = true, Name = "ThreadPoolHealth sampler" };
        StartupMinWorkerThreads = MinThreads().Workers;
        StartupMinIoThreads = MinThreads().Io;
        Metrics = metrics;
    }

    internal HealthMetrics Metrics { get; }

    /// <summary>The minimum worker threads when the app started, which the reset restores.</summary>
    public int StartupMinWorkerThreads { get; }

    public int StartupMinIoThreads { get; }

    public InjectionCounts Injections => ThreadInjectionListener.Shared.Counts();

    public Task StartAsync(CancellationToken cancellationToken)
    {
        Metrics.Observe(_probe, ThreadInjectionListener.Shared, _attribution);
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

        _probe.Dispose();
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

    public HealthSnapshot Snapshot()
    {
        var (minWorkers, minIo) = MinThreads();
        ThreadPool.GetMaxThreads(out var maxWorkers, out var maxIo);
        var window = _probe.Window();
        var pending = Math.Round(_probe.OldestPendingMs(), 1);
        return new HealthSnapshot(
            Environment.ProcessorCount,
            ThreadPool.ThreadCount,
            minWorkers,
            maxWorkers,
            minIo,
            maxIo,
            ThreadPool.PendingWorkItemCount,
            ThreadPool.CompletedWorkItemCount,
            new QueueDelaySnapshot(window, pending, _options.StarvationThresholdMs, Math.Max(window.P95Ms, pending) >= _options.StarvationThresholdMs),
            Injections,
            _attribution.Snapshot(),
            _attribution.TopHolders(3).Select(e => e.Route).ToList());
    }

    internal static (int Workers, int Io) MinThreads()
    {
        ThreadPool.GetMinThreads(out var workers, out var io);
        return (workers, io);
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
                MinThreads().Workers,
                queueDelay,
                starved,
                Injections,
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
            WarnAtMostEvery(queueDelay);
        }
    }

    private void WarnAtMostEvery(double queueDelayMs)
    {
        var now = Stopwatch.GetTimestamp();
        if (_lastWarning != long.MinValue && Stopwatch.GetElapsedTime(_lastWarning, now).TotalSeconds < _options.WarningIntervalSeconds)
        {
            return;
        }

        _lastWarning = now;
        var holders = _attribution.TopHolders(3);
        var named = holders.Count == 0
            ? "none of the endpoints (the blocking code runs outside a request, or awaits Task.Run)"
            : string.Join(", ", holders.Select(h => h.HoldTime.Count == 0
                ? $"{h.Route} ({h.HoldingThread} holding now, none finished yet)"
                : $"{h.Route} ({h.HoldingThread} holding now, hold p95 {h.HoldTime.P95Ms} ms)"));
        LogStarvation(_logger, queueDelayMs, ThreadPool.ThreadCount, ThreadPool.PendingWorkItemCount, named);
        _stackCapture.OnStarvation();
    }

    [LoggerMessage(EventId = 5001, Level = LogLevel.Warning,
        Message = "Thread-pool starvation: a queued work item waited {QueueDelayMs} ms; {ThreadCount} threads, {PendingWorkItems} items queued. Top thread holders: {Holders}")]
    private static partial void LogStarvation(ILogger logger, double queueDelayMs, int threadCount, long pendingWorkItems, string holders);
}
