using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Scenarios;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Mock;

/// <summary>
/// The physics of thread-pool starvation, measured: each scenario on a fresh server process with a cold pool pinned to
/// two processors, 125 connections for 4 s from a load-runner process, figures compared with taskasyncwait measured the
/// same way in the same run (once for the class, on a fresh server of its own). Margins are ratios with room for a shared
/// 2-core machine under load.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class StarvationLoadTests(MockLoadMeasurements measurements, ITestOutputHelper output) : IClassFixture<MockLoadMeasurements>
{
    private const double Delay = LoadExperiment.DelayMs;

    [Fact]
    public async Task TaskAsyncWait_StaysNearBaseline_Under125ConcurrentRequests()
    {
        var result = await measurements.MeasureAsync("taskasyncwait");

        var load = result.Load;
        var figures = LoadExperiment.Describe(result);
        output.WriteLine(figures);
        // The median, not the p95: a half-second stall of a shared 2-core machine delays the 125 requests in flight,
        // a quarter of a 2 s run's answers, and would decide a p95 alone.
        Assert.True(load.Latency.P50 <= 1.2 * Delay, $"median {load.Latency.P50:0} ms > 1.2 × {Delay} ms. {figures}");
        // Near 125 / 0.5 s; 80 % leaves room for a loaded machine's cold start.
        Assert.True(load.RequestsPerSecond >= 0.8 * LoadExperiment.LimitRequestsPerSecond, $"throughput below 80 % of the limit. {figures}");
        Assert.True(load.Failures == 0, $"failures. {figures}");
    }

    [Fact]
    public async Task TaskAsyncWait_UnderLoad_TheStarvationRuleNeverDeclaresStarvation() =>
        RuntimeViews.AssertTheRuleNeverDeclaresStarvation(await measurements.WaitsAsync("taskasyncwait"), output, "taskasyncwait");

    [Theory]
    [MemberData(nameof(CatalogueData.MockBadShapes), MemberType = typeof(CatalogueData))]
    public async Task BadScenario_IsClearlyDegraded_AgainstTaskAsyncWaitUnderTheSameLoad(string scenario)
    {
        var good = await measurements.MeasureAsync("taskasyncwait");
        var bad = await measurements.MeasureAsync(scenario);

        var figures = $"{LoadExperiment.Describe(good)}\n{LoadExperiment.Describe(bad)}";
        output.WriteLine(figures);
        // The "at least" median counts requests that timed out or were still waiting with the wait they had: a starved
        // server cannot look faster because its slowest requests never came back.
        var medianRatio = bad.Load.LatencyAtLeast.P50 / good.Load.LatencyAtLeast.P50;
        var throughputRatio = bad.Load.RequestsPerSecond / good.Load.RequestsPerSecond;
        // Every BAD request waits out its timeout, about five delays: twice the GOOD median leaves ample room.
        Assert.True(medianRatio >= 2, $"{scenario}: median only {medianRatio:0.00} × taskasyncwait's. {figures}");
        // A starved BAD server answers next to nothing within the timeout.
        Assert.True(throughputRatio <= 0.5, $"{scenario}: throughput {throughputRatio:P0} of taskasyncwait's. {figures}");
    }

    // Two seconds into the load every busy pool thread sits in the scenario's wait; identical stacks group, and the same wait
    // reached by Kestrel's different paths makes a few groups of it, so the largest names it. syncio, asyncsyncio and
    // taskrunwait park in MockDatabase.Query's Thread.Sleep, the mock's stand-in for a driver's blocking read (Sleep), under
    // the action, its state machine or the Task.Run lambda (the request's own thread having been handed back).
    [Theory]
    [InlineData("taskwait", BlockingKind.TaskWait)]
    [InlineData("tasksleepwait", BlockingKind.Sleep)]
    [InlineData("syncio", BlockingKind.Sleep)]
    [InlineData("asyncsyncio", BlockingKind.Sleep)]
    [InlineData("taskrunwait", BlockingKind.Sleep)]
    [InlineData("getawaiterresult", BlockingKind.GetAwaiterGetResult)]
    public async Task BadScenario_SnapshotUnderLoad_TopPoolGroupNamesTheActionAndItsBlockingCall(string scenario, BlockingKind blocking)
    {
        var snapshot = await measurements.SnapshotAsync(scenario);

        output.WriteLine(BlockedStacks.Describe(snapshot));
        BlockedStacks.AssertTopSiteNames(snapshot, CatalogueData.Find(ScenarioCatalogue.Mock, scenario), blocking);
    }

    // The fix the top site ends with, from what its code does: .Result and GetAwaiter().GetResult() make the caller async;
    // the Thread.Sleep poll awaits; syncio and asyncsyncio park in the mock driver's blocking Query, whose type offers
    // QueryAsync; taskrunwait's Query runs in a delegate handed to Task.Run, which only moved the block.
    [Theory]
    [InlineData("taskwait")]
    [InlineData("getawaiterresult")]
    [InlineData("tasksleepwait")]
    [InlineData("syncio")]
    [InlineData("asyncsyncio")]
    [InlineData("taskrunwait")]
    public async Task BadScenario_SnapshotUnderLoad_TopSiteEndsWithTheFixForWhatItsCodeDoes(string scenario)
    {
        var snapshot = await measurements.SnapshotAsync(scenario);
        var expected = scenario switch
        {
            "taskwait" => BlockingFrame.FixFor(BlockingKind.TaskWait),
            "getawaiterresult" => BlockingFrame.FixFor(BlockingKind.GetAwaiterGetResult),
            "tasksleepwait" => BlockingFrame.FixFor(BlockingKind.Sleep),
            "taskrunwait" => BlockingFrame.TaskRunFix,
            _ => BlockingFrame.AsyncTwinFix($"{nameof(MockDatabase)}.{nameof(MockDatabase.Query)}", nameof(MockDatabase.QueryAsync)),
        };

        var top = snapshot.TopBlockedPoolSite();
        Assert.True(top?.Fix == expected, $"{scenario}: the top site's fix is {top?.Fix ?? "(no site)"}, not {expected}. {BlockedStacks.Describe(snapshot)}");
    }

    [Theory]
    [MemberData(nameof(CatalogueData.MockBadShapes), MemberType = typeof(CatalogueData))]
    public async Task BadScenario_RuntimeViewUnderLoad_IsTheCataloguesCells(string scenario)
    {
        var shape = CatalogueData.Find(ScenarioCatalogue.Mock, scenario);
        var diagnosis = await measurements.DiagnosisAsync(scenario);

        RuntimeViews.AssertIsTheCatalogues(diagnosis, shape, output, scenario);
    }

    [Fact]
    public async Task TaskAsyncWait_SnapshotUnderLoad_HasNoPoolThreadParkedInTheApp()
    {
        var snapshot = await measurements.SnapshotAsync("taskasyncwait");

        output.WriteLine(BlockedStacks.Describe(snapshot));
        BlockedStacks.AssertNoPoolGroupBlockedInApp(snapshot, CatalogueData.Find(ScenarioCatalogue.Mock, "taskasyncwait"));
    }

    // The comparison these tests read is the one a user runs: `compare --family mock --diagnose`, out of process; what it
    // printed and wrote into --out, each scenario in the table, the Markdown, the JSON and the chart.
    [Fact]
    public async Task Comparison_PrintsTheTable_AndWritesMarkdownJsonAndChart_ForEachScenario()
    {
        var output = await measurements.OutputAsync("taskasyncwait");

        var scenarios = CatalogueData.Shapes(ScenarioCatalogue.Mock).Select(name => CatalogueData.Find(ScenarioCatalogue.Mock, name)).ToList();
        Assert.All(scenarios, s => Assert.Contains($"| {s.Name} | {s.Verdict.ToString().ToUpperInvariant()} |", output.Table, StringComparison.Ordinal));
        Assert.All(scenarios, s => Assert.Contains($"| {s.Name} | {s.Verdict.ToString().ToUpperInvariant()} |", output.Markdown, StringComparison.Ordinal));
        Assert.Contains("](compare.svg)", output.Markdown, StringComparison.Ordinal);
        Assert.Contains("<polyline", output.Svg, StringComparison.Ordinal);
        Assert.All(scenarios, s => Assert.Contains($"{s.Name} ({s.Verdict.ToString().ToUpperInvariant()})", output.Svg, StringComparison.Ordinal));
        using var json = JsonDocument.Parse(output.Json);
        var results = json.RootElement.GetProperty("results");
        Assert.Equal(scenarios.Select(s => s.Name).Order(StringComparer.Ordinal), results.EnumerateArray().Select(r => r.GetProperty("scenario").GetString()!).Order(StringComparer.Ordinal));
        // The sampler always takes one sample when it starts and one when it stops; once a second in between, the load
        // leaves no gap longer than a second and a half (a late wake-up on a busy machine).
        Assert.All(results.EnumerateArray(), r =>
        {
            var seconds = r.GetProperty("threads").EnumerateArray().Select(t => t.GetProperty("seconds").GetDouble()).ToList();
            var gaps = seconds.Zip(seconds.Skip(1), (a, b) => b - a).ToList();
            Assert.True(seconds.Count >= 3 && gaps.Max() <= 1.5, $"{r.GetProperty("scenario")}: thread count sampled at {string.Join(", ", seconds.Select(x => x.ToString("0.00", CultureInfo.InvariantCulture)))} s");
        });
    }

    [Fact]
    public async Task Ping_IsSlowerUnderBadLoad_ThanUnderGoodLoad()
    {
        var good = await measurements.MeasureAsync("taskasyncwait");
        var bad = await measurements.MeasureAsync("tasksleepwait");

        var figures = $"{LoadExperiment.Describe(good)}\n{LoadExperiment.Describe(bad)}";
        output.WriteLine(figures);
        var ratio = bad.Ping.LatencyAtLeast.P50 / Math.Max(good.Ping.LatencyAtLeast.P50, 1);
        // Under tasksleepwait a ping waits behind the queued requests until the cut or its timeout: seconds against milliseconds.
        Assert.True(ratio >= 10, $"ping median under tasksleepwait only {ratio:0.0} × under taskasyncwait. {figures}");
        // And the GOOD side's ping stays a ping.
        Assert.True(good.Ping.LatencyAtLeast.P50 <= LoadExperiment.PingUnderGoodLoadMs, $"ping median under taskasyncwait over {LoadExperiment.PingUnderGoodLoadMs} ms. {figures}");
    }

    public static TheoryData<string> RescuedScenarios => [.. LoadExperiment.RescuedScenarios];

    [Theory]
    [MemberData(nameof(RescuedScenarios))]
    public async Task SetMinThreadsAboveTheConnectionCount_RescuesBadScenario_AtTheCostOfThreads(string scenario)
    {
        const int minThreads = LoadExperiment.RescueMinThreads;
        var good = await measurements.MeasureAsync("taskasyncwait");
        var rescued = await measurements.MeasureAsync(scenario, minWorkerThreads: minThreads);

        var figures = $"{LoadExperiment.Describe(good)}\n{LoadExperiment.Describe(rescued)}";
        output.WriteLine(figures);
        output.WriteLine($"The rescue of {scenario} took {rescued.PeakThreads} threads at peak ({good.PeakThreads} for taskasyncwait), {rescued.ThreadsAtEnd} at the end.");
        var medianRatio = rescued.Load.Latency.P50 / good.Load.Latency.P50;
        var throughputRatio = rescued.Load.RequestsPerSecond / good.Load.RequestsPerSecond;
        // The median is the robust figure: it stays near the delay even when other processes push the p95 far above it.
        Assert.True(medianRatio <= 1.2, $"{scenario} with {minThreads} min threads: median {medianRatio:0.00} × taskasyncwait's. {figures}");
        Assert.True(throughputRatio >= 0.8, $"{scenario} with {minThreads} min threads: throughput {throughputRatio:P0} of taskasyncwait's. {figures}");
        Assert.True(rescued.Load.Failures == 0, $"failures. {figures}");
        // The price: a thread per blocked request, several times taskasyncwait's count.
        Assert.True(rescued.PeakThreads >= LoadExperiment.Connections, $"only {rescued.PeakThreads} threads for {LoadExperiment.Connections} blocked requests. {figures}");
        // compare's report (compare.md) says which of the three ways it raised the minimum: the words of ServerOptions, whose
        // variable MinThreadsSettingsTests finds in a server's environment.
        var report = (await measurements.OutputAsync(scenario, minThreads)).Markdown;
        Assert.Contains($"minimum worker threads {minThreads}, {ServerOptions.MinWorkerThreadsVia}", report, StringComparison.Ordinal);
    }
}
