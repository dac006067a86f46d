namespace DiagnosticScenarios.Diagnosis;

/// <summary>What counts as the app's own code, and how long a snapshot samples the target.</summary>
public sealed record DiagnosisOptions
{
    /// <summary>The default: every namespace of this project.</summary>
    public const string DefaultAppNamespacePrefix = "DiagnosticScenarios.";

    public static DiagnosisOptions Default { get; } = new();

    /// <summary>A frame whose method starts with this prefix is the app's (this library's own frames never are).</summary>
    public string AppNamespacePrefix { get; init; } = DefaultAppNamespacePrefix;

    /// <summary>
    /// How long the sample profiler runs for a snapshot. A blocked thread is sampled in its first millisecond; the rest
    /// of the window gives a busy target's threads time to be reached. dotnet-stack uses 10 ms; a loaded 2-core machine needs more.
    /// </summary>
    public TimeSpan SampleDuration { get; init; } = TimeSpan.FromMilliseconds(75);

    /// <summary>How long the session may take to hand over its events after it is stopped (the rundown of every method).</summary>
    public TimeSpan DrainTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>The EventPipe buffer in the target, in MB: room for a few seconds of samples of a few hundred threads.</summary>
    public int BufferMegabytes { get; init; } = 64;
}
