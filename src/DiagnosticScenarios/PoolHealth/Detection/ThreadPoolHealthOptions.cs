using System.ComponentModel.DataAnnotations;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>Configuration section <c>ThreadPoolHealth</c>: the detector, the attribution, and the live page and controls that read it.</summary>
public sealed class ThreadPoolHealthOptions
{
    public const string SectionName = "ThreadPoolHealth";

    /// <summary><see cref="Enabled"/> read before the options are built, to decide what to register; its default the property's.</summary>
    public static bool IsEnabled(IConfiguration configuration) =>
        configuration.GetValue(SectionName + ":" + nameof(Enabled), new ThreadPoolHealthOptions().Enabled);

    /// <summary>
    /// Off removes the probe, the sampler, the event listener, the middleware, the stack capture and every
    /// <c>/api/threadpool</c> route, so their cost can be measured.
    /// </summary>
    public bool Enabled { get; set; } = true;

    /// <summary>How often the probe queues a work item, in milliseconds.</summary>
    [Range(10, 10_000)]
    public int ProbeIntervalMs { get; set; } = 100;

    /// <summary>The detector raises its event (a log line, a stack capture) at most once per this many seconds, while starvation lasts or as it comes and goes.</summary>
    [Range(1, 3600)]
    public int StarvationEventIntervalSeconds { get; set; } = 10;

    /// <summary>How many one-second samples the stream keeps for late or reconnecting readers.</summary>
    [Range(10, 3600)]
    public int HistorySeconds { get; set; } = 600;
}
