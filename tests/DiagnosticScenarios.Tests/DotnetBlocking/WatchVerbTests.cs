using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// The diagnosis CLI's <c>watch</c> attached to the app before the load, in the shared observed runs: under taskwait it
/// fires within the load and names taskwait's code; under taskasyncwait, at the same load, it never fires. (A fixture app
/// that is not this one: Diagnosis/WatchTests.)
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class WatchVerbTests(ObservedRuns runs, ITestOutputHelper output)
{
    [Fact]
    public async Task Watch_UnderTaskWait_FiresDuringTheLoad_AndNamesTaskWaitsLineOrRoute()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var watch = run.Record<WatchRecord>();

        output.WriteLine($"{run}\n{watch.Exit.Error}\n{watch.Result?.Snapshot?.TopBlockedPoolSite()?.Describe(watch.Result.Snapshot.PoolThreadCount)}");
        Assert.True(watch.Exit.ExitCode == 0 && watch.Result is { Starved: true }, watch.Exit.ToString());
        var named = watch.WatchingFrom + TimeSpan.FromSeconds(watch.Result.AfterSeconds);
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"named the site {(named - run.LoadStartedAt).TotalSeconds:0.0} s after the load started"));
        Assert.True(named < run.StoppedAt, $"the watch named the site at {named:HH:mm:ss.fff}, after the load ({run.StoppedAt:HH:mm:ss.fff})");
        var top = watch.Result.Snapshot!.TopBlockedPoolSite();
        Assert.NotNull(top);
        Assert.Equal(BlockingKind.TaskWait, top.Blocking.Kind);
        Assert.True(BlockedStacks.Names(top, CatalogueData.Find(ScenarioCatalogue.Mock, "taskwait")), top.Describe(watch.Result.Snapshot.PoolThreadCount));
    }

    [Fact]
    public async Task Watch_UnderTaskAsyncWait_NeverFires_AndExitsWithTheNoStarvationCode()
    {
        var run = await runs.RunAsync(RunPlan.TaskAsyncWait);

        var watch = run.Record<WatchRecord>();

        output.WriteLine($"{run}\n{watch.Exit.Error}");
        Assert.True(watch.Exit.ExitCode == 3 && watch.Result is { Starved: false, Snapshot: null }, watch.Exit.ToString());
        // It read the whole load, not a second or two of it: watching before the load started (the observed runs start it
        // first), still watching when it ended.
        var ended = watch.WatchingFrom + TimeSpan.FromSeconds(watch.Result.AfterSeconds);
        Assert.True(ended >= run.StoppedAt,
            $"the watch read from {watch.WatchingFrom:HH:mm:ss.fff} to {ended:HH:mm:ss.fff}, the load ran from {run.LoadStartedAt:HH:mm:ss.fff} to {run.StoppedAt:HH:mm:ss.fff}");
        Assert.True(watch.Result.Seconds.Count >= run.SecondsUnderLoad, $"the watch read {watch.Result.Seconds.Count} seconds of a {run.SecondsUnderLoad} s load");
    }
}
