using System.Diagnostics;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Detection;

/// <summary>The starvation warning in the log, naming the endpoints that hold the threads; at most one per <c>WarningIntervalSeconds</c>.</summary>
public sealed partial class StarvationLog(IOptions<ThreadPoolHealthOptions> options, EndpointAttribution attribution, ILogger<StarvationLog> logger)
{
    private long _lastWarning = long.MinValue;

    /// <summary>Called by the sampler thread only.</summary>
    public void Warn(double queueDelayMs)
    {
        var now = Stopwatch.GetTimestamp();
        if (_lastWarning != long.MinValue && Stopwatch.GetElapsedTime(_lastWarning, now).TotalSeconds < options.Value.WarningIntervalSeconds)
        {
            return;
        }

        _lastWarning = now;
        var holders = attribution.TopHolders(3);
        var named = holders.Count == 0
            ? "none of the endpoints (the blocking code runs outside a request, or awaits Task.Run)"
            : string.Join(", ", holders.Select(h => h.HoldTime.Count == 0
                ? $"{h.Route} ({h.HoldingThread} holding now, none finished yet)"
                : $"{h.Route} ({h.HoldingThread} holding now, hold p95 {h.HoldTime.P95Ms} ms)"));
        LogStarvation(logger, queueDelayMs, ThreadPool.ThreadCount, ThreadPool.PendingWorkItemCount, named);
    }

    [LoggerMessage(EventId = 5001, Level = LogLevel.Warning,
        Message = "Thread-pool starvation: a queued work item waited {QueueDelayMs} ms; {ThreadCount} threads, {PendingWorkItems} items queued. Top thread holders: {Holders}")]
    private static partial void LogStarvation(ILogger logger, double queueDelayMs, int threadCount, long pendingWorkItems, string holders);
}
