namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// What each pair of the blocking family runs with when a request names nothing, chosen so the pair shows its point at
/// 125 connections on two processors. The routes read them here; the catalogue serves them with each scenario.
/// </summary>
public static class BlockingDefaults
{
    /// <summary>
    /// The lock pair serves one request per delay whatever it does, so at 125 connections every request waits 125 delays, 2 s.
    /// Shorter would shorten that wait, but each turn of the GOOD twin also pays a timer's lateness and two hops through the
    /// pool (a few milliseconds on a loaded machine), which would keep it from its limit for reasons that are not the lock's.
    /// </summary>
    public const int LockDelayMs = 16;

    /// <summary>The semaphore pair's wait inside the throttle.</summary>
    public const int SemaphoreDelayMs = 200;

    /// <summary>Calls the semaphore pair lets through at once: at 125 connections the throttle, not the clients, sets the pace.</summary>
    public const int SemaphoreThrottle = 50;

    /// <summary>
    /// How long the slow upstream of the httpclient pair takes to answer: the tutorial's query. Each request of the GOOD twin
    /// is two HTTP exchanges on the two cores the load shares, so it runs at 250 a second rather than the other pairs' 625.
    /// </summary>
    public const int HttpClientDelayMs = Scenarios.ScenarioOptions.DefaultMockDelayMs;

    /// <summary>The size of each body the bodyread pair's clients upload.</summary>
    public const int BodyReadBytes = 4096;

    /// <summary>How long each bodyread client takes to upload its body.</summary>
    public const int BodyReadUploadMs = 200;

    /// <summary>
    /// The largest body the bodyread pair reads: sixteen times its load's. Each action reads the whole body into memory, so
    /// Kestrel's 30 MB default would let one request hold 30 MB; a larger body gets a 413 naming this limit.
    /// </summary>
    public const int BodyReadMaxBytes = 16 * BodyReadBytes;

    /// <summary>How long the producer of the blockingcollection pair takes to hand over the item.</summary>
    public const int BlockingCollectionDelayMs = 200;

    /// <summary>How long the difactory pair's settings store takes to answer.</summary>
    public const int DiFactoryDelayMs = 200;

    /// <summary>
    /// One request in this many blocks: at 125 connections on the 500 ms query, one blocked thread about a quarter of the
    /// time, which a single stack snapshot mostly misses and a wait trace of a few seconds always records.
    /// </summary>
    public const int IntermittentEvery = 500;
}
