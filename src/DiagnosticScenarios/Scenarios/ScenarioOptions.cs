using System.ComponentModel.DataAnnotations;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Scenarios;

/// <summary>Defaults of the scenarios, from the <c>Scenarios</c> section of configuration.</summary>
public sealed class ScenarioOptions
{
    public const string SectionName = "Scenarios";

    /// <summary>The mock database's delay when neither configuration nor the request names one.</summary>
    public const int DefaultMockDelayMs = 500;

    /// <summary>How long the mock database takes to answer when a request names no <c>delayMs</c>.</summary>
    [Range(0, ScenarioLimits.MaxDelayMs)]
    public int MockDelayMs { get; set; } = DefaultMockDelayMs;

    /// <summary>How long each taskburst task waits when the request names no <c>delayMs</c>.</summary>
    [Range(0, ScenarioLimits.MaxDelayMs)]
    public int TaskBurstDelayMs { get; set; } = 1000;

    /// <summary>The most memory <c>memleak</c> may root in one process, in kilobytes.</summary>
    [Range(1, long.MaxValue)]
    public long MemLeakCapKb { get; set; } = 2_000_000;
}
