using DiagnosticScenarios.Detection;

namespace DiagnosticScenarios.LivePage;

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
    InjectionCounts Injections,
    IReadOnlyList<EndpointSnapshot> Endpoints,
    IReadOnlyList<string> TopHolders)
{
    /// <summary>The pool, the probe, the injections and the attribution, read now.</summary>
    public static HealthSnapshot Take(QueueDelayProbe probe, EndpointAttribution attribution, ThreadPoolHealthOptions options)
    {
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
            new QueueDelaySnapshot(window, pending, options.StarvationThresholdMs, Math.Max(window.P95Ms, pending) >= options.StarvationThresholdMs),
            ThreadInjectionListener.Shared.Counts(),
            attribution.Snapshot(),
            attribution.TopHolders(3).Select(e => e.Route).ToList());
    }
}

/// <summary>Probe delays over the last ten seconds, the oldest probe still waiting, and the verdict.</summary>
public sealed record QueueDelaySnapshot(Percentiles Window, double PendingMs, int ThresholdMs, bool Starved);
