namespace DiagnosticScenarios.Detection;

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
