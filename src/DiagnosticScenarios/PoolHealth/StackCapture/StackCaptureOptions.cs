namespace DiagnosticScenarios.PoolHealth.StackCapture;

/// <summary>Configuration section <c>StackCapture</c>: the app's snapshots of its own threads.</summary>
public sealed class StackCaptureOptions
{
    public const string SectionName = "StackCapture";

    /// <summary>
    /// Whether the detector's starvation event takes a capture by itself (as often as the event comes, see
    /// <c>ThreadPoolHealth:StarvationEventIntervalSeconds</c>); <c>POST /api/threadpool/stacks</c> works either way.
    /// </summary>
    public bool OnStarvation { get; set; } = true;

    /// <summary>Where <c>POST /api/threadpool/stacks?dump=true</c> writes its dump; empty: a folder under the temporary one.</summary>
    public string? DumpFolder { get; set; }
}
