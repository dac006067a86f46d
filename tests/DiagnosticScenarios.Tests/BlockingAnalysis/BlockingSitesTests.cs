using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// How a snapshot's parked pool threads make sites. A Release build's JIT inlines a small action into the invoker ASP.NET
/// Core compiles for it at run time, and a cold app's first requests to the action, arriving at once, may each compile
/// one: a capture early in a tasksleepwait run can find its parked threads spread over several copies of the invoker,
/// which must still make one site.
/// </summary>
public sealed class BlockingSitesTests
{
    private const string SleepRoute = "GET /api/diagscenario/tasksleepwait";

    [Fact]
    public void CopiesOfOneInvoker_AreOneSite_WhereTheAppsLabelsSayTheThreadsServeOneRoute()
    {
        var snapshot = Snapshot(exactLabels: true, Inlined(43, SleepRoute, threads: 4), Inlined(44, SleepRoute), Inlined(45, SleepRoute));

        var site = Assert.Single(snapshot.BlockedPoolSites);

        Assert.Equal(6, site.Threads);
        Assert.Equal(3, site.Groups.Count);
        Assert.Contains($"serving {SleepRoute} (6 threads)", site.RequestsSeen, StringComparison.Ordinal);
    }

    /// <summary>
    /// MVC reaches an action's invoker from its executor and from its invoker: one <c>.Result</c> under load must not read as
    /// two sites, one "called by ControllerActionInvoker.InvokeActionMethodAsync" and one "called by
    /// ActionMethodExecutor+SyncObjectResultExecutor.Execute".
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void OneInvokerReachedFromTwoCallers_IsOneSite_NamingBothCallers(bool exactLabels)
    {
        var snapshot = Snapshot(exactLabels, Inlined(44, SleepRoute, threads: 26, caller: Invoker), Inlined(44, SleepRoute, threads: 25));

        var site = Assert.Single(snapshot.BlockedPoolSites);

        Assert.Equal(51, site.Threads);
        Assert.Equal(new InlinedInvoker("dynamicClass.lambda_method44", [Invoker, Executor]).ToString(), site.InlinedInto?.ToString());
    }

    [Fact]
    public void CopiesServingTwoRoutes_AreTwoSites()
    {
        var snapshot = Snapshot(exactLabels: true, Inlined(43, SleepRoute, threads: 4), Inlined(44, "GET /api/diagscenario/other", threads: 2));

        Assert.Equal([4, 2], snapshot.BlockedPoolSites.Select(s => s.Threads));
    }

    [Fact]
    public void Copies_StayApart_WhereTheLabelsAreOnlyTheLastRequestAThreadStarted()
    {
        var snapshot = Snapshot(exactLabels: false, Inlined(43, SleepRoute, threads: 4), Inlined(44, SleepRoute));

        Assert.Equal([4, 1], snapshot.BlockedPoolSites.Select(s => s.Threads));
    }

    private static int _nextThread = 100;

    private const string Executor = "ActionMethodExecutor+SyncObjectResultExecutor.Execute";
    private const string Invoker = "ControllerActionInvoker.InvokeActionMethodAsync";

    private static ThreadGroup Inlined(int copy, string request, int threads = 1, string caller = Executor)
    {
        // Leaf first, as a Release build's sampled stack of tasksleepwait shows it: the action's body is gone into the invoker.
        string[] frames =
        [
            "System.Private.CoreLib!System.Threading.Thread.Sleep(int32)",
            $"dynamicClass!dynamicClass.lambda_method{copy}(pMT: Microsoft.Extensions.Internal.ObjectMethodExecutor,class System.Object,class System.Object[])",
            caller == Executor
                ? "Microsoft.AspNetCore.Mvc.Core!Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor+SyncObjectResultExecutor.Execute(class Microsoft.AspNetCore.Mvc.Infrastructure.ActionContext,class Microsoft.AspNetCore.Mvc.Infrastructure.IActionResultTypeMapper,class Microsoft.Extensions.Internal.ObjectMethodExecutor,class System.Object,class System.Object[])"
                : $"Microsoft.AspNetCore.Mvc.Core!Microsoft.AspNetCore.Mvc.Infrastructure.{caller}()",
            "System.Private.CoreLib!System.Threading.PortableThreadPool+WorkerThread.WorkerThreadStart()",
        ];
        var ids = Enumerable.Range(Interlocked.Add(ref _nextThread, threads) - threads, threads).ToList();
        return new ThreadGroup(threads, PoolThreads: true, BlockingFrame.Find(frames), [], ids, frames)
        {
            InlinedInto = new InlinedInvoker($"dynamicClass.lambda_method{copy}", [caller]),
            Requests = [new RequestCount(request, threads)],
        };
    }

    private static StackSnapshot Snapshot(bool exactLabels, params ThreadGroup[] groups)
    {
        var labels = groups.SelectMany(g => g.ThreadIds.Select(id => (id, g.Requests[0].Request))).ToDictionary(l => l.id, l => l.Request);
        var threads = groups.Sum(g => g.Threads);
        return new StackSnapshot(0, DateTimeOffset.UtcNow, 0, 0, threads, threads, groups)
        {
            Requests = new RequestLabels("labels", exactLabels ? "serving" : "last request started on these threads:", "none", labels, exactLabels),
        };
    }
}
