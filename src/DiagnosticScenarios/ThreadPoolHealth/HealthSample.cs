namespace DiagnosticScenarios.ThreadPoolHealth;

/// <summary>One second of the stream. <see cref="Sequence"/> is the SSE id, so a reader can ask for what it missed.</summary>
public sealed record HealthSample(
    long Sequence,
    long UnixTimeMs,
    int ThreadCount,
    long PendingWorkItems,
    long CompletedWorkItemsPerSecond,
    int MinWorkerThreads,
    double QueueDelayMs,
    bool Starved,
    InjectionCounts Injections,
    IReadOnlyList<EndpointSecond> Endpoints);

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
    IReadOnlyList<string> TopHolders);

/// <summary>Probe delays over the last ten seconds, the oldest probe still waiting, and the verdict.</summary>
public sealed record QueueDelaySnapshot(Percentiles Window, double PendingMs, int ThresholdMs, bool Starved);
