using DiagnosticScenarios.PoolHealth.Detection;

namespace DiagnosticScenarios.PoolHealth.LivePage;

/// <summary>The answer of <c>GET /api/threadpool</c>.</summary>
public sealed record HealthSnapshot(
    int ProcessorCount,
    int ThreadCount,
    int MinWorkerThreads,
    int MaxWorkerThreads,
    int MinIoThreads,
    int MaxIoThreads,
    long PendingWorkItems,
    long CompletedWorkItems,
    QueueDelaySnapshot QueueDelay,
    StarvationSnapshot Starvation,
    InjectionCounts Injections,
    IReadOnlyList<EndpointSnapshot> Endpoints,
    IReadOnlyList<string> TopHolders)
{
    /// <summary>The pool, the probe, the injections and the attribution, read now.</summary>
    public static HealthSnapshot Take(QueueDelayProbe probe, EndpointAttribution attribution, HealthSampler detector, ThreadInjectionListener injections)
    {
        var latest = detector.Latest;
        var min = MinThreads.Now();
        ThreadPool.GetMaxThreads(out var maxWorkers, out var maxIo);
        var window = probe.Window();
        var pending = Math.Round(probe.OldestPendingMs(), 1);
        return new HealthSnapshot(
            Environment.ProcessorCount,
            ThreadPool.ThreadCount,
            min.Workers,
            maxWorkers,
            min.Io,
            maxIo,
            ThreadPool.PendingWorkItemCount,
            ThreadPool.CompletedWorkItemCount,
            new QueueDelaySnapshot(window, pending),
            new StarvationSnapshot(latest?.Starved ?? false, latest?.Starvation ?? "no second sampled yet", latest?.Sequence ?? 0),
            injections.Counts(),
            attribution.Snapshot(),
            attribution.TopHolders(3).Select(e => e.Route).ToList());
    }
}

/// <summary>Probe delays over the last ten seconds, and how long the oldest probe still waiting has waited.</summary>
public sealed record QueueDelaySnapshot(Percentiles Window, double PendingMs);

/// <summary>The detector's verdict for its latest second (the one the stream, the log and the capture act on).</summary>
/// <param name="Starved">Whether the latest second was starved.</param>
/// <param name="Reason">The rule's evidence or the condition that failed.</param>
/// <param name="Sequence">The sample it belongs to (0 before the first).</param>
public sealed record StarvationSnapshot(bool Starved, string Reason, long Sequence);
