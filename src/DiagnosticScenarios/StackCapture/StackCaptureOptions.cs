using System.ComponentModel.DataAnnotations;

namespace DiagnosticScenarios.StackCapture;

/// <summary>Configuration section <c>StackCapture</c>: the app's snapshots of its own threads.</summary>
public sealed class StackCaptureOptions
{
    public const string SectionName = "StackCapture";

    /// <summary>Whether the detector's starvation warning takes a capture by itself; <c>POST /api/threadpool/stacks</c> works either way.</summary>
    public bool OnStarvation { get; set; } = true;

    /// <summary>At most one automatic capture per this many seconds: a capture costs a few hundred milliseconds of one core.</summary>
    [Range(1, 3600)]
    public int MinIntervalSeconds { get; set; } = 10;
}
