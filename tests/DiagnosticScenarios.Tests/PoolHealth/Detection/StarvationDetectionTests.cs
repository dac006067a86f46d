using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Detection;

/// <summary>
/// The detector on the shared observed runs (a fresh server per scenario, two processors, 125 connections from the app's
/// runner): how the runtime grew the pool, as the monitor counts it; the warning the detector logs; and the healthy
/// control, where nothing fires.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class StarvationDetectionTests(ObservedRuns runs, ITestOutputHelper output)
{
    private const string StarvationWarning = "Thread-pool starvation:";

    [Fact]
    public async Task Monitor_CountsCooperativeBlockingInjections_UnderTaskWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var monitor = run.Record<MonitorRecord>();

        output.WriteLine($"{run}\ninjections: {monitor.Last.GetProperty("injections")}");
        Assert.True(monitor.Injections("cooperativeBlocking") > 0, monitor.Last.GetProperty("injections").ToString());
    }

    [Fact]
    public async Task Monitor_CountsStarvationInjectionsAndNoCooperativeOnes_UnderTaskSleepWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskSleepWait);

        var monitor = run.Record<MonitorRecord>();

        // Thread.Sleep does not tell the pool it blocks: only the starvation heuristic (the gate thread) adds threads.
        output.WriteLine($"{run}\ninjections: {monitor.Last.GetProperty("injections")}");
        Assert.True(monitor.Injections("starvation") > 0, monitor.Last.GetProperty("injections").ToString());
        Assert.Equal(0, monitor.Injections("cooperativeBlocking"));
    }

    [Theory]
    [InlineData("taskwait")]
    [InlineData("tasksleepwait")]
    public async Task StarvationWarning_NamesTheLoadedEndpointAsTheTopHolder(string scenario)
    {
        var run = await runs.RunAsync(RunPlan.Named(scenario));

        var warnings = run.LogLines(StarvationWarning);

        output.WriteLine($"{run}\n{string.Join('\n', warnings)}");
        Assert.NotEmpty(warnings);
        Assert.Contains(warnings, line => line.Text.Contains($"Top thread holders: {run.Plan.Route} (", StringComparison.Ordinal));
    }

    [Fact]
    public async Task NothingFires_UnderTaskAsyncWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskAsyncWait);

        var stream = run.Record<StreamRecord>();
        var stacks = run.Record<StacksRecord>();
        var monitor = run.Record<MonitorRecord>();

        output.WriteLine($"{run}\n{stream.Live.Count} samples, starved {stream.Live.Count(s => s.Starved)}; stacks {(int)stacks.LastStatus}; injections {monitor.Last.GetProperty("injections")}");
        // The control did load the app: 125 connections on a 500 ms query make about 250 requests a second.
        Assert.True(run.Load.GetProperty("result").GetProperty("requestsPerSecond").GetDouble() > 100, run.Load.ToString());
        Assert.DoesNotContain(stream.Live, s => s.Starved);
        Assert.Empty(run.LogLines(StarvationWarning));
        Assert.Empty(stacks.Served);
        Assert.Equal(System.Net.HttpStatusCode.NotFound, stacks.LastStatus);
        Assert.Equal(0, monitor.Injections("starvation"));
    }
}
