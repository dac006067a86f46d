using System.ComponentModel.DataAnnotations;

namespace DiagnosticScenarios.StackCapture;

/// <summary>Configuration section <c>StackCapture</c>: the app's snapshots of its own threads.</summary>
public sealed class StackCaptureOptions
{
    public const string SectionName = "StackCapture";

    /// <summary>At most one automatic capture per this many seconds: a capture costs a few hundred milliseconds of one core.</summary>
    [Range(1, 3600)]
    public int MinIntervalSeconds { get; set; } = 10;
}
