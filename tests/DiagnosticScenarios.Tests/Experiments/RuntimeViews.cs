using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.Scenarios.Catalogue;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// The runtime's view of a BAD scenario (<see cref="RuntimeView"/>), measured from what <c>compare --diagnose</c> saw of its
/// server under its load, and the table of it on docs/scenarios.md.
/// </summary>
internal static class RuntimeViews
{
    private const string Yes = "✓";
    private const string Sometimes = "some runs";

    private static readonly string[] Header =
        ["family", "scenario", "the pool adds threads (cooperative blocking)", "WaitHandleWait names it", "a snapshot names it", "the rule declares it", "named to the line in Release"];

    /// <summary>Each cell from the measurement: the pool's adjustments by reason, the wait sites, the snapshot's top site.</summary>
    public static RuntimeView Measure(ScenarioDiagnosis diagnosis, Scenario scenario) => new(
        diagnosis.Waits.PoolAdjustments.GetValueOrDefault("CooperativeBlocking") > 0,
        diagnosis.Waits.Sites.Any(site => BlockedStacks.Names(site, scenario)),
        diagnosis.Snapshot.TopBlockedPoolSite() is { } top && BlockedStacks.Names(top, scenario),
        diagnosis.Waits.StarvedAtSecond is not null,
        diagnosis.Snapshot.TopBlockedPoolSite() is { } named && BlockedStacks.NamesLine(named.AppFrames, scenario.Action));

    /// <summary>
    /// Measures the cells and holds them against the catalogue's. A blank cell is a finding only from a trace that saw the
    /// load's requests start and threads wait, so a trace that recorded neither fails instead.
    /// </summary>
    public static void AssertIsTheCatalogues(ScenarioDiagnosis diagnosis, Scenario scenario, ITestOutputHelper output, string label)
    {
        var measured = Measure(diagnosis, scenario);

        output.WriteLine($"{label}: measured {measured}\n{Describe(diagnosis)}");
        Assert.True(diagnosis.Waits.RequestsStarted > 0 && diagnosis.Waits.Waits > 0 && diagnosis.Waits.Seconds.Count >= StarvationRule.Default.WindowSeconds,
            $"the wait trace saw {diagnosis.Waits.RequestsStarted} requests start, {diagnosis.Waits.Waits} waits and {diagnosis.Waits.Seconds.Count} seconds of counters: it measured nothing");
        Assert.Equal(scenario.Runtime, Held(measured, scenario.Runtime!));
    }

    /// <summary>
    /// A GOOD twin's load, as the starvation rule reads the runtime's counters of it: a window read under the load (or the
    /// test saw nothing the rule could have called starvation), and never starvation.
    /// </summary>
    public static void AssertTheRuleNeverDeclaresStarvation(WaitAnalysis waits, ITestOutputHelper output, string label)
    {
        var seconds = string.Join(", ", waits.Seconds.Select(s => $"q{s.QueueLength}/c{s.CompletedPerSecond:0}/cpu{s.CpuPercent:0}"));
        output.WriteLine($"{label}: the runtime's counters over the load: {seconds}");
        Assert.True(waits.Seconds.Count >= StarvationRule.Default.WindowSeconds, $"{label}: {waits.Seconds.Count} seconds of counters: the trace read no window");
        Assert.True(waits.StarvedAtSecond is null, $"{label}: the rule declared starvation once {waits.StarvedAtSecond} s were read: {seconds}");
    }

    /// <summary>The measured cells, with those the catalogue leaves open (runs differ) left open too: shown, not held.</summary>
    public static RuntimeView Held(RuntimeView measured, RuntimeView catalogue) => measured with
    {
        PoolCompensates = catalogue.PoolCompensates is null ? null : measured.PoolCompensates,
        SnapshotNamesIt = catalogue.SnapshotNamesIt is null ? null : measured.SnapshotNamesIt,
        NamedToTheLine = catalogue.NamedToTheLine is null ? null : measured.NamedToTheLine,
    };

    /// <summary>What a failing comparison shows: the measured figures behind the cells.</summary>
    public static string Describe(ScenarioDiagnosis diagnosis) =>
        $"{diagnosis.Waits.RequestsStarted} requests started, pool adjustments: {string.Join(", ", diagnosis.Waits.PoolAdjustments.Select(a => $"{a.Key} {a.Value}"))}; "
        + $"the rule: {(diagnosis.Waits.StarvedAtSecond is { } second ? $"starved once {second} s were read" : "never starved")} ({string.Join(", ", diagnosis.Waits.Seconds.Select(s => $"q{s.QueueLength}/c{s.CompletedPerSecond:0}/cpu{s.CpuPercent:0}"))}); "
        + $"{diagnosis.Waits.PoolWaits} pool waits, sites:\n{string.Join('\n', diagnosis.Waits.Sites.Take(4).Select(s => "  " + s.Describe()))}\n"
        + BlockedStacks.Describe(diagnosis.Snapshot);

    /// <summary>The scenarios with a runtime view, in the catalogue's order.</summary>
    public static IEnumerable<Scenario> Scenarios => ScenarioCatalogue.Scenarios.Where(s => s.Runtime is not null);

    /// <summary>The document's rows as <see cref="Row"/> writes them.</summary>
    public static IReadOnlyList<string> Rows(IReadOnlyList<string> document) => MarkdownTables.Rows(document, Header);

    public static string Row(Scenario scenario) => string.Join(" | ", Cells(scenario).Select(c => c.Trim('`')));

    public static string Render() => MarkdownTables.Render(Header, "|---|---|:-:|:-:|:-:|:-:|:-:|", Scenarios.Select(Cells));

    private static IReadOnlyList<string> Cells(Scenario scenario) =>
    [
        scenario.Family, $"`{scenario.Name}`",
        Cell(scenario.Runtime!.PoolCompensates),
        scenario.Runtime.RaisesWaitHandleWait ? Yes : "", Cell(scenario.Runtime.SnapshotNamesIt),
        scenario.Runtime.RuleDeclaresIt ? Yes : "", Cell(scenario.Runtime.NamedToTheLine),
    ];

    private static string Cell(bool? value) => value switch { true => Yes, false => "", null => Sometimes };
}
