using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.PoolHealth.Detection;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.PoolHealth.StackCapture;

/// <summary>
/// Snapshots the app's own threads with an EventPipe session on this very process, recorded by a child process of the app
/// (<see cref="StackRecorder"/>) and analysed here, from a dedicated thread: a starved pool is neither needed to take the
/// snapshot nor to analyse it, and the warning it logs appears while the pool is still starved. Nothing runs until the
/// detector declares starvation or someone asks; the thread is started on the first capture.
/// </summary>
public sealed partial class StackCaptureService : IStarvationListener, IDisposable
{
    public const string StarvationTrigger = "starvation";
    public const string RequestTrigger = "request";

    // The app knows which request each thread serves: a parked thread is named by its route whatever the JIT inlined.
    private static readonly DiagnosisOptions CaptureOptions = DiagnosisOptions.Default with { ThreadLabels = RequestThreads.Snapshot };

    private readonly StackCaptureOptions _options;
    private readonly ILogger<StackCaptureService> _logger;
    private readonly Lock _lock = new();
    private readonly AutoResetEvent _wake = new(initialState: false);
    private readonly CancellationTokenSource _stopping = new();
    private Thread? _worker;
    private TaskCompletionSource<StackCaptureResult>? _pending;
    private string _pendingTrigger = StarvationTrigger;
    private DateTimeOffset _pendingSince;
    private StackCaptureResult? _latest;
    private int _disposed;

    public StackCaptureService(IOptions<StackCaptureOptions> options, ILogger<StackCaptureService> logger)
    {
        _options = options.Value;
        _logger = logger;
    }

    /// <summary>The latest capture, or null before the first.</summary>
    public StackCaptureResult? Latest
    {
        get
        {
            lock (_lock)
            {
                return _latest;
            }
        }
    }

    /// <summary>The detector's starvation event: queues a capture unless one is under way. Never blocks.</summary>
    public void OnStarvation(StarvationDeclared starvation)
    {
        if (!_options.OnStarvation)
        {
            return;
        }

        lock (_lock)
        {
            if (_pending is null)
            {
                Queue(StarvationTrigger, DateTimeOffset.UtcNow);
            }
        }
    }

    /// <summary>Takes a capture now (or joins the one in progress) and completes when it is done.</summary>
    public Task<StackCaptureResult> CaptureNowAsync()
    {
        lock (_lock)
        {
#pragma warning disable VSTHRD003 // deliberate: the capture thread completes it, with continuations forced off that thread
            return (_pending ?? Queue(RequestTrigger, DateTimeOffset.UtcNow)).Task;
#pragma warning restore VSTHRD003
        }
    }

    // The container holds it twice (as itself and as a starvation listener), so it may be disposed twice.
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }

        _stopping.Cancel();
        _wake.Set();
        _worker?.Join(TimeSpan.FromSeconds(2));
        _wake.Dispose();
        _stopping.Dispose();
    }

    private TaskCompletionSource<StackCaptureResult> Queue(string trigger, DateTimeOffset at)
    {
        _pending = new TaskCompletionSource<StackCaptureResult>(TaskCreationOptions.RunContinuationsAsynchronously);
        _pendingTrigger = trigger;
        _pendingSince = at;
        if (_worker is null)
        {
            _worker = new Thread(Run) { IsBackground = true, Name = "Stack capture" };
            _worker.Start();
        }

        _wake.Set();
        return _pending;
    }

    private void Run()
    {
        while (true)
        {
            _wake.WaitOne();
            if (_stopping.IsCancellationRequested)
            {
                return;
            }

            TaskCompletionSource<StackCaptureResult>? done;
            string trigger;
            DateTimeOffset requestedAt;
            lock (_lock)
            {
                (done, trigger, requestedAt) = (_pending, _pendingTrigger, _pendingSince);
            }

            if (done is null)
            {
                continue;
            }

            var result = Capture(trigger, requestedAt);
            lock (_lock)
            {
                _latest = result;
                _pending = null;
            }

            done.SetResult(result);
        }
    }

    private StackCaptureResult Capture(string trigger, DateTimeOffset requestedAt)
    {
        try
        {
            var snapshot = StackSnapshots.Capture(Environment.ProcessId, CaptureOptions, StackRecorder.Record);
            var top = snapshot.TopBlockedPoolSite();
            var milliseconds = Math.Round(snapshot.CaptureMs + snapshot.AnalysisMs);
            if (snapshot.Incomplete is { } incomplete)
            {
                LogIncomplete(_logger, trigger, incomplete);
            }

            if (top is null)
            {
                LogNoBlockedGroup(_logger, trigger, snapshot.PoolThreadCount, milliseconds);
            }
            else
            {
                LogTopSite(_logger, trigger, top.Describe(snapshot.PoolThreadCount), top.Fix ?? "none known", milliseconds);
            }

            return new StackCaptureResult(trigger, requestedAt, snapshot, null);
        }
        catch (DiagnosisException e)
        {
            LogFailed(_logger, trigger, e.Message);
            return new StackCaptureResult(trigger, requestedAt, null, e.Message);
        }
#pragma warning disable CA1031 // the capture's own thread: anything unexpected is this capture's failure (a 503 naming it), never the app's end
        catch (Exception e)
#pragma warning restore CA1031
        {
            var reason = $"{e.GetType().Name}: {e.Message}";
            LogFailed(_logger, trigger, reason);
            return new StackCaptureResult(trigger, requestedAt, null, reason);
        }
    }

    [LoggerMessage(EventId = 5101, Level = LogLevel.Warning, Message = "Stack capture ({Trigger}): {TopSite}. Fix: {Fix} (captured and analysed in {Milliseconds} ms)")]
    private static partial void LogTopSite(ILogger logger, string trigger, string topSite, string fix, double milliseconds);

    [LoggerMessage(EventId = 5102, Level = LogLevel.Information, Message = "Stack capture ({Trigger}): none of the {PoolThreads} pool threads is parked in a blocking call (captured and analysed in {Milliseconds} ms)")]
    private static partial void LogNoBlockedGroup(ILogger logger, string trigger, int poolThreads, double milliseconds);

    [LoggerMessage(EventId = 5103, Level = LogLevel.Warning, Message = "Stack capture ({Trigger}) failed: {Reason}")]
    private static partial void LogFailed(ILogger logger, string trigger, string reason);

    [LoggerMessage(EventId = 5104, Level = LogLevel.Warning, Message = "Stack capture ({Trigger}) is incomplete: {Warning}")]
    private static partial void LogIncomplete(ILogger logger, string trigger, string warning);
}
