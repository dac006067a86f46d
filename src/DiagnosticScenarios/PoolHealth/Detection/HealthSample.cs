namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>One second of the stream. <see cref="RunId"/> and <see cref="Sequence"/> make its SSE id, so a reader can ask for what it missed.</summary>
/// <param name="RunId">This run of the app: when its sampler started, in Unix ms. A restarted app's samples carry another, so a
/// reader that stayed open across the restart tells the runs apart whatever their sequences.</param>
/// <param name="Sequence">1 for the run's first second, then one more each second.</param>
/// <param name="UnixTimeMs">When it was taken.</param>
/// <param name="ThreadCount">Pool threads.</param>
/// <param name="PendingWorkItems">The pool's queue length.</param>
/// <param name="CompletedWorkItemsPerSecond">Work items the pool completed in the second.</param>
/// <param name="CpuPercent">The process's CPU in the second, as a share of all its processors.</param>
/// <param name="MinWorkerThreads">The pool's minimum now (the workaround raises it).</param>
/// <param name="QueueDelayMs">The longest a probe's work item waited for a thread in the second (or is still waiting).</param>
/// <param name="Starved">The detector's verdict for the second.</param>
/// <param name="Starvation">Why the rule says starved or not, with the figures it read.</param>
/// <param name="Injections">The runtime's thread-goal adjustments so far, by reason.</param>
/// <param name="Endpoints">Each endpoint's figures for the second.</param>
public sealed record HealthSample(
    long RunId,
    long Sequence,
    long UnixTimeMs,
    int ThreadCount,
    long PendingWorkItems,
    long CompletedWorkItemsPerSecond,
    double CpuPercent,
    int MinWorkerThreads,
    double QueueDelayMs,
    bool Starved,
    string Starvation,
    InjectionCounts Injections,
    IReadOnlyList<EndpointSecond> Endpoints);
