namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>What counts as the app's own code, what the app says its threads are serving, and how long a snapshot samples the target.</summary>
public sealed record DiagnosisOptions
{
    public static DiagnosisOptions Default { get; } = new();

    /// <summary>
    /// Namespaces or assembly names whose frames are the app's (<c>--app</c>), overriding the automatic rule (a module that
    /// is not the runtime, the shared framework or a package). Empty: the automatic rule.
    /// </summary>
    public IReadOnlyList<string> AppPrefixes { get; init; } = [];

    /// <summary>Folders to look for the app's PDBs in when they are not beside its modules (<c>--symbols</c>); empty: beside them only.</summary>
    public IReadOnlyList<string> SymbolDirectories { get; init; } = [];

    /// <summary>
    /// For a capture of the calling process: what each OS thread is serving (its request and endpoint), read at the end of
    /// the sampling, before the session stops, so a parked thread is named by its endpoint whatever the JIT did to its frames.
    /// </summary>
    public Func<IReadOnlyDictionary<int, ThreadLabel>>? ThreadLabels { get; init; }

    /// <summary>
    /// How long the sample profiler runs for a snapshot. A blocked thread is sampled in its first millisecond; the rest
    /// of the window gives a busy target's threads time to be reached. dotnet-stack uses 10 ms; a loaded 2-core machine needs more.
    /// </summary>
    public TimeSpan SampleDuration { get; init; } = TimeSpan.FromMilliseconds(75);

    /// <summary>
    /// How long the target's diagnostic port may take to answer the start of a session. It answers one command at a time,
    /// and another session's stop (its rundown) may hold it for seconds on a starved machine.
    /// </summary>
    public TimeSpan AnswerTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>How long the session may take to hand over its events after it is stopped (the rundown of every method).</summary>
    public TimeSpan DrainTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>The starvation rule that judges the seconds of the runtime's counters.</summary>
    public StarvationRule Rule { get; init; } = StarvationRule.Default;

    /// <summary>The EventPipe buffer in the target, in MB: room for a few seconds of samples of a few hundred threads.</summary>
    public int BufferMegabytes { get; init; } = 64;
}
