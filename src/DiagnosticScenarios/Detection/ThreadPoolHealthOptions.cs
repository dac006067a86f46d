using System.ComponentModel.DataAnnotations;

namespace DiagnosticScenarios.Detection;

/// <summary>Configuration section <c>ThreadPoolHealth</c>: the detector, the attribution, and the live page and controls that read it.</summary>
public sealed class ThreadPoolHealthOptions
{
    public const string SectionName = "ThreadPoolHealth";

    /// <summary><see cref="Enabled"/> read before the options are built, to decide what to register.</summary>
    public static bool IsEnabled(IConfiguration configuration) =>
        configuration.GetValue(SectionName + ":" + nameof(Enabled), defaultValue: true);

    /// <summary>Off removes the probe, the sampler, the event listener, the middleware and the API, so their cost can be measured.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>How often the probe queues a work item, in milliseconds.</summary>
    [Range(10, 10_000)]
    public int ProbeIntervalMs { get; set; } = 100;

    /// <summary>A queue delay at or above this many milliseconds counts as starvation.</summary>
    [Range(1, 60_000)]
    public int StarvationThresholdMs { get; set; } = 250;

    /// <summary>At most one starvation warning in the log per this many seconds.</summary>
    [Range(1, 3600)]
    public int WarningIntervalSeconds { get; set; } = 5;

    /// <summary>How many one-second samples the stream keeps for late or reconnecting readers.</summary>
    [Range(10, 3600)]
    public int HistorySeconds { get; set; } = 600;
}
