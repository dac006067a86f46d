using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.Tests.Load;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>Stack snapshots of a server process (a Release build) whose pool threads are held by blocking requests.</summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class StackSnapshotTests(ITestOutputHelper output)
{
    private const int Workers = 20;
    private const int DelayMs = 1000;

    // Long enough for the looping requests to reach their blocking call; each thread parked at the end started its
    // request within the last delay, inside the window of hosting events the snapshot is taken with.
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan RequestsWindow = TimeSpan.FromSeconds(1.5);

    [Theory]
    [InlineData("taskwait", BlockingKind.TaskWait)]
    [InlineData("tasksleepwait", BlockingKind.Sleep)]
    [InlineData("syncio", BlockingKind.Sleep)]
    public async Task Snapshot_TopBlockedSite_NamesTheActionsLineOrItsRoute_AndItsBlockingCall_WhileRequestsHoldPoolThreads(string scenario, BlockingKind blocking)
    {
        await using var server = await BlockedServer.StartAsync();
        server.Loop(scenario, Workers, DelayMs);
        await Task.Delay(Settle);

        var snapshot = await Task.Factory.StartNew(() => StackSnapshots.CaptureWithRequests(server.ProcessId, RequestsWindow),
            CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).DefaultTimeout();

        output.WriteLine(BlockedStacks.Describe(snapshot));
        BlockedStacks.AssertTopSiteNames(snapshot, CatalogueData.Find(ScenarioCatalogue.Mock, scenario), blocking);

        // Two processors give the pool two threads at once; every one of them is in the scenario's blocking call, whichever
        // exact stack each shows.
        var top = snapshot.TopBlockedPoolSite()!;
        Assert.True(top.Threads >= 2, $"expected the requests to park at least the pool's two starting threads, got {top.Threads}");
    }
}
