namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>The starvation warning in the log, naming the endpoints that hold the threads: one line per <see cref="StarvationDeclared"/>.</summary>
public sealed partial class StarvationLog(EndpointAttribution attribution, ILogger<StarvationLog> logger) : IStarvationListener
{
    public void OnStarvation(StarvationDeclared starvation)
    {
        ArgumentNullException.ThrowIfNull(starvation);
        var holders = attribution.TopHolders(3);
        var named = holders.Count == 0
            ? "none of the endpoints (the blocking code runs outside a request, or awaits Task.Run)"
            : string.Join(", ", holders.Select(h => h.HoldTime.Count == 0
                ? $"{h.Route} ({h.HoldingThread} holding now, none finished yet)"
                : $"{h.Route} ({h.HoldingThread} holding now, hold p95 {h.HoldTime.P95Ms} ms)"));
        var sample = starvation.Sample;
        LogStarvation(logger, sample.QueueDelayMs, sample.ThreadCount, sample.PendingWorkItems, starvation.Verdict.Reason, named);
    }

    [LoggerMessage(EventId = 5001, Level = LogLevel.Warning,
        Message = "Thread-pool starvation: a queued work item waited {QueueDelayMs} ms; {ThreadCount} threads, {PendingWorkItems} items queued ({Evidence}). Top thread holders: {Holders}")]
    private static partial void LogStarvation(ILogger logger, double queueDelayMs, int threadCount, long pendingWorkItems, string evidence, string holders);
}
