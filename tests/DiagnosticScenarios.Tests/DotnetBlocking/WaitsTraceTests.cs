using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// The workshop's wait trace (dotnet-trace <c>--clrevents waithandle</c>, then the CLI's <c>waits</c> on its file), taken
/// during the shared taskwait run. That tasksleepwait raises no such wait, and which other scenarios do, is the runtime
/// view the load tests measure (RuntimeViews).
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class WaitsTraceTests(ObservedRuns runs, ITestOutputHelper output)
{
    [Fact]
    public async Task DotnetTraceWaitHandleFile_ReadByTheCli_UnderTaskWait_NamesTaskWaitsLineOrItsInvoker_AsTheTopPoolSite()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var analysis = run.Record<WaitsTraceRecord>().Analysis;

        output.WriteLine($"{analysis.Waits} waits, {analysis.PoolWaits} on pool threads, {analysis.RequestsStarted} requests started, {analysis.DurationMs} ms");
        foreach (var site in analysis.Sites.Take(5))
        {
            output.WriteLine(site.Describe());
        }

        var top = analysis.TopSite();
        Assert.NotNull(top);
        Assert.Equal(BlockingKind.TaskWait, top.Blocking!.Kind);
        // The file has the wait events alone, no ASP.NET Core hosting events to name a route by: where the JIT inlined the
        // action into ASP.NET Core's invoker, the site says which invoker instead.
        var taskWait = CatalogueData.Find(ScenarioCatalogue.Mock, "taskwait");
        Assert.True(BlockedStacks.NamesLine(top.AppFrames, taskWait.Action) || BlockedStacks.IsInlinedIntoAnActionInvoker(top.InlinedInto),
            $"the top site names neither {taskWait.Action}'s line nor MVC's invoker it was inlined into: {top.Describe()}");
    }
}
