using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.PoolHealth.StackCapture;

/// <summary>One capture of the app's own threads: why and when it was taken, and the grouped snapshot or why there is none.</summary>
/// <param name="Trigger"><c>starvation</c> (the detector) or <c>request</c> (<c>POST /api/threadpool/stacks</c>).</param>
/// <param name="RequestedAt">When the capture was asked for.</param>
/// <param name="Snapshot">The grouped stacks; null when the capture failed.</param>
/// <param name="Error">Why the capture failed, or null.</param>
public sealed record StackCaptureResult(string Trigger, DateTimeOffset RequestedAt, StackSnapshot? Snapshot, string? Error)
{
    /// <summary>The dump written just before the capture (<c>POST /api/threadpool/stacks?dump=true</c>); null when none was asked for.</summary>
    public string? DumpFile { get; init; }
}
