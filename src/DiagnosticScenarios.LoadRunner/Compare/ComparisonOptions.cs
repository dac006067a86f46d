using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>What <c>compare</c> measures: each scenario of a family on a fresh server, loaded the same way.</summary>
public sealed record ComparisonOptions
{
    public required string AppPath { get; init; }
    /// <summary>A family of the app's catalogue (<c>GET /api/scenarios</c>) that can be loaded.</summary>
    public string Family { get; init; } = DefaultFamily;

    /// <summary>The family <c>compare</c> measures when none is named: the tutorial's mock query.</summary>
    public const string DefaultFamily = "mock";

    /// <summary>Scenario names; empty means every BAD and GOOD scenario of the family.</summary>
    public IReadOnlyList<string> Scenarios { get; init; } = [];

    public int Connections { get; init; } = LoadOptions.DefaultConnections;
    public TimeSpan Duration { get; init; } = LoadOptions.DefaultDuration;
    public TimeSpan Timeout { get; init; } = LoadOptions.DefaultTimeout;

    /// <summary>
    /// How long the requests (and pings) in flight when sending stops may still answer before they are counted as
    /// unfinished; null: each until its <see cref="Timeout"/>. The same for every scenario of the comparison.
    /// </summary>
    public TimeSpan? Drain { get; init; }

    /// <summary><c>DOTNET_PROCESSOR_COUNT</c> for every server: 1 shows a 1-CPU container, 16 a big box.</summary>
    public int ProcessorCount { get; init; } = ServerOptions.DefaultProcessorCount;

    /// <summary>The <c>SetMinThreads</c> workaround, applied at start; null for the default pool.</summary>
    public int? MinWorkerThreads { get; init; }

    /// <summary>Each client's random pause, up to this, between an answer and its next request; null: back to back.</summary>
    public TimeSpan? ThinkTime { get; init; }

    /// <summary>The query delay; null for the family's default.</summary>
    public int? DelayMs { get; init; }

    public IReadOnlyDictionary<string, string> Environment { get; init; } = new Dictionary<string, string>();

    /// <summary>
    /// Also diagnose each server under its load, from outside as any .NET process: a wait trace over the load and a stack
    /// snapshot half-way through, recorded while the load runs and analysed after it, before the next load starts.
    /// </summary>
    public bool Diagnose { get; init; }

    /// <summary>With <see cref="Diagnose"/>, when the snapshot is taken; null: half-way through the load.</summary>
    public TimeSpan? SnapshotAfter { get; init; }
}
