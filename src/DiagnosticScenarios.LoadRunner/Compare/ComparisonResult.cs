using System.Text.Json.Serialization;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>One <c>compare</c> run: the settings and one result per scenario.</summary>
public sealed record ComparisonResult
{
    public required DateTimeOffset StartedAt { get; init; }
    public required string Family { get; init; }
    public required int Connections { get; init; }
    public required double DurationSeconds { get; init; }
    public required double TimeoutSeconds { get; init; }

    /// <summary>How long requests in flight when sending stopped could still answer; null: each until its timeout.</summary>
    public double? DrainSeconds { get; init; }
    /// <summary>The query delay every scenario ran with; null when each ran with its own default (see each load's URL).</summary>
    public required int? DelayMs { get; init; }
    public required int ProcessorCount { get; init; }
    public int? MinWorkerThreads { get; init; }

    /// <summary>How <see cref="MinWorkerThreads"/> was applied, in words; null without it.</summary>
    public string? MinWorkerThreadsVia { get; init; }

    /// <summary>Each client's random pause, up to this many milliseconds, between an answer and its next request.</summary>
    public double ThinkTimeMs { get; init; }

    public required string Machine { get; init; }
    public required string CommandLine { get; init; }
    public required IReadOnlyList<ScenarioResult> Results { get; init; }
}

/// <summary>One scenario on its own fresh server: the load report, the server's thread count over time, and ping's latency meanwhile.</summary>
public sealed record ScenarioResult
{
    public required string Scenario { get; init; }
    [JsonConverter(typeof(ReportVerdictConverter))]
    public required ScenarioVerdict Verdict { get; init; }

    /// <summary>For a BAD scenario, the name of the GOOD one it is measured against; null otherwise.</summary>
    public string? Twin { get; init; }
    public required LoadReport Load { get; init; }

    /// <summary>Sequential pings on a connection of their own during the load: the collateral damage.</summary>
    public required LoadReport Ping { get; init; }

    public required IReadOnlyList<ThreadSample> Threads { get; init; }

    /// <summary>What <c>--diagnose</c> saw of the server under this load; null without it.</summary>
    public ScenarioDiagnosis? Diagnosis { get; init; }

    public int PeakThreads => Threads.Count == 0 ? 0 : Threads.Max(t => t.Threads);
    public int ThreadsAtEnd => Threads.Count == 0 ? 0 : Threads[^1].Threads;
}

/// <summary>A server under its load as the diagnosis library sees it from outside.</summary>
/// <param name="Snapshot">Every thread half-way through the load, grouped, its blocking sites named.</param>
/// <param name="Waits">The runtime's wait events over the load, by call site, and the pool's thread-goal adjustments by reason.</param>
public sealed record ScenarioDiagnosis(DiagnosticScenarios.BlockingAnalysis.StackSnapshot Snapshot, DiagnosticScenarios.BlockingAnalysis.WaitAnalysis Waits);
