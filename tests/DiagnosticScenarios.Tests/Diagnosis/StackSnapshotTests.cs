using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.Tests.Load;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>Stack snapshots of a server process whose pool threads are held by blocking requests.</summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class StackSnapshotTests(ITestOutputHelper output)
{
    private const int HeldRequests = 20;
    private const int HoldMs = 8000;

    // Long enough for the held requests to reach their blocking call; far shorter than the hold.
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(1.5);

    [Theory]
    [InlineData("taskwait", "StarvationScenariosController.TaskWait", BlockingKind.TaskWait)]
    [InlineData("tasksleepwait", "StarvationScenariosController.TaskSleepWait", BlockingKind.Sleep)]
    [InlineData("syncio", "StarvationScenariosController.SyncIo", BlockingKind.Sleep)]
    public async Task Snapshot_TopBlockedSite_NamesTheActionAndItsBlockingCall_WhileRequestsHoldPoolThreads(string scenario, string action, BlockingKind blocking)
    {
        await using var server = await BlockedServer.StartAsync();
        server.Hold(scenario, HeldRequests, HoldMs);
        await Task.Delay(Settle);

        var snapshot = await StackSnapshots.CaptureOnDedicatedThreadAsync(server.ProcessId).DefaultTimeout();

        var top = snapshot.TopBlockedPoolSite();
        output.WriteLine($"{snapshot.ThreadCount} threads, {snapshot.PoolThreadCount} pool, capture {snapshot.CaptureMs} ms, analysis {snapshot.AnalysisMs} ms");
        foreach (var site in snapshot.BlockedPoolSites)
        {
            output.WriteLine(site.Describe(snapshot.PoolThreadCount));
            foreach (var group in site.Groups)
            {
                output.WriteLine($"  {group.Describe(snapshot.PoolThreadCount)}");
            }
        }

        Assert.NotNull(top);
        Assert.Contains(action, top.AppFrames);
        Assert.Equal(blocking, top.Blocking.Kind);

        // Two processors give the pool two threads at once; every one of them is in the scenario's blocking call, whichever
        // exact stack each shows.
        Assert.True(top.Threads >= 2, $"expected the held requests to park at least the pool's two starting threads, got {top.Threads}");
    }
}
