using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// Which call a sampled stack is parked in, and whether the app's code made it. A sample catches running threads too: one
/// caught inside a non-blocking call (an async query's send) must not be reported as parked there, nor a driver's
/// momentary lock inside an awaited call as the app blocking.
/// </summary>
public sealed class BlockingClassificationTests
{
    private const string App = "DiagnosticScenarios!DiagnosticScenarios.Scenarios.Sql.SqlScenarioController";

    [Fact]
    public void Find_NamesTheSocketRead_OfASyncQueryParkedOnTheSocket()
    {
        // Leaf first, as the sample profiler records it (a sync SqlClient query on Linux, from a real snapshot).
        string[] frames =
        [
            "System.Private.CoreLib!System.Threading.ManualResetEventSlim.Wait(int32,value class System.Threading.CancellationToken)",
            "System.Net.Sockets!System.Net.Sockets.SocketAsyncContext.PerformSyncOperation(value class OperationQueue`1<!!0>&,!!0,int32,int32)",
            "System.Net.Sockets!System.Net.Sockets.SocketAsyncContext.ReceiveFrom(value class System.Memory`1<unsigned int8>,value class System.Net.Sockets.SocketFlags&,value class System.Memory`1<unsigned int8>,int32&,int32,int32&)",
            "System.Net.Sockets!System.Net.Sockets.SocketPal.Receive(class System.Net.Sockets.SafeSocketHandle,unsigned int8[],int32,int32,value class System.Net.Sockets.SocketFlags,int32&)",
            "System.Net.Sockets!System.Net.Sockets.Socket.Receive(unsigned int8[],int32,int32,value class System.Net.Sockets.SocketFlags,value class System.Net.Sockets.SocketError&)",
            "System.Net.Sockets!System.Net.Sockets.NetworkStream.Read(unsigned int8[],int32,int32)",
            "Microsoft.Data.SqlClient!Microsoft.Data.SqlClient.SqlCommand.ExecuteNonQuery()",
            $"{App}.Sync(value class System.Nullable`1<int32>)",
        ];

        var frame = BlockingFrame.Find(frames);

        Assert.NotNull(frame);
        Assert.Equal(BlockingKind.SocketRead, frame.Kind);
        Assert.Equal("NetworkStream.Read", frame.Frame);
    }

    [Fact]
    public void Find_NamesNothing_ForAThreadRunningAnAsyncSend()
    {
        string[] frames =
        [
            "System.Net.Sockets!System.Net.Sockets.SocketPal.TryCompleteSendTo(class System.Net.Sockets.SafeSocketHandle,value class System.ReadOnlySpan`1<unsigned int8>,int32&,int32&,value class System.Net.Sockets.SocketError&)",
            "System.Net.Sockets!System.Net.Sockets.SocketAsyncContext.SendToAsync(value class System.Memory`1<unsigned int8>,int32,int32,int32&,value class System.Net.Sockets.SocketError&)",
            "System.Net.Sockets!System.Net.Sockets.Socket.SendAsync(value class System.ReadOnlyMemory`1<unsigned int8>,value class System.Net.Sockets.SocketFlags,value class System.Threading.CancellationToken)",
            "Npgsql!Npgsql.NpgsqlCommand+<ExecuteReader>d__120.MoveNext()",
            $"{App}+<Async>d__10.MoveNext()",
        ];

        Assert.Null(BlockingFrame.Find(frames));
    }

    // A ReadyToRun CoreLib inlines the pool's work loop into the worker's start; run jitted (DOTNET_ReadyToRun=0) it keeps
    // its frame, under every pool thread, the busy ones too. Leaf first, from such a snapshot.
    private static readonly string[] JittedPoolWorkerBottom =
    [
        "System.Private.CoreLib!System.Threading.ThreadPoolWorkQueue.Dispatch()",
        "System.Private.CoreLib!System.Threading.PortableThreadPool+WorkerThread.WorkerDoWork(class System.Threading.PortableThreadPool,bool&)",
        "System.Private.CoreLib!System.Threading.PortableThreadPool+WorkerThread.WorkerThreadStart()",
        "System.Private.CoreLib!System.Threading.Thread.StartCallback()",
    ];

    [Fact]
    public void Find_NamesTheBlockingCall_NotTheWorkLoopBelowIt_WhenTheLoopKeepsItsFrame()
    {
        string[] sleeping =
        [
            "System.Private.CoreLib!System.Threading.Thread.Sleep(int32)",
            "Fabrikam.Stock!Fabrikam.Stock.Warehouse.CountOnHand(class System.String)",
            "Microsoft.AspNetCore.Routing!Microsoft.AspNetCore.Routing.EndpointMiddleware.Invoke(class Microsoft.AspNetCore.Http.HttpContext)",
            .. JittedPoolWorkerBottom,
        ];
        string[] running = ["Fabrikam.Stock!Fabrikam.Stock.Warehouse.Count(class System.String)", .. JittedPoolWorkerBottom];
        string[] idle =
        [
            "System.Private.CoreLib!System.Threading.LowLevelLifoSemaphore.WaitForSignal(int32)",
            "System.Private.CoreLib!System.Threading.LowLevelLifoSemaphore.Wait(int32,bool)",
            .. JittedPoolWorkerBottom[1..],
        ];

        Assert.Equal([BlockingKind.Sleep, null, BlockingKind.IdleWorker], new[] { sleeping, running, idle }.Select(f => BlockingFrame.Find(f)?.Kind));
    }

    [Fact]
    public void Find_TellsASemaphoreWaitFromAnAwaitedOne()
    {
        const string monitorWait = "System.Private.CoreLib!System.Threading.Monitor.Wait(class System.Object,int32)";
        string[] parked = [monitorWait, "System.Private.CoreLib!System.Threading.SemaphoreSlim.Wait(int32,value class System.Threading.CancellationToken)", $"{App}.Sync(value class System.Nullable`1<int32>)"];
        string[] running = ["System.Private.CoreLib!System.Threading.SemaphoreSlim.WaitAsync(int32,value class System.Threading.CancellationToken)", $"{App}+<Async>d__10.MoveNext()"];

        Assert.Equal(BlockingKind.SemaphoreSlim, BlockingFrame.Find(parked)?.Kind);
        Assert.Null(BlockingFrame.Find(running));
    }

    [Fact]
    public void Find_NamesTheLockInsideSemaphoreSlimsWaitAsync_AsALockOfTheAwaitedCall_WithNoFixOfTheApps()
    {
        // Leaf first, a GOOD twin's wait as compare recorded it (docs/benchmarks/compare-blocking-2cpu): SemaphoreSlim.WaitAsync,
        // inlined into the action, takes the semaphore's own lock for a moment in WaitAsyncCore (which a prefix match on
        // SemaphoreSlim.Wait took for a synchronous Wait).
        string[] frames =
        [
            "System.Private.CoreLib!System.Threading.Monitor.Enter_Slowpath(class System.Object)",
            "System.Private.CoreLib!System.Threading.SemaphoreSlim.WaitAsyncCore(int64,value class System.Threading.CancellationToken)",
            "DiagnosticScenarios!DiagnosticScenarios.Scenarios.Blocking.LockScenariosController+<LockAsync>d__6.MoveNext()",
            "System.Private.CoreLib!System.Runtime.CompilerServices.AsyncMethodBuilderCore.Start(!!0&)",
        ];
        var appFrame = new AppFrame(FrameNames.TypeAndMethod(frames[2]), new SourceLine("LockScenarios.cs", 44, null), null);
        var blocking = BlockingFrame.Find(frames);
        var site = new WaitSite([appFrame], blocking, 5, 0, 22.1, 16, 5, frames);

        Assert.Equal((BlockingKind.Monitor, "Monitor.Enter_Slowpath"), (blocking?.Kind, blocking?.Frame));
        Assert.Null(BlockingFrame.FixFor(blocking, frames, appFrame, underTaskRun: false));
        Assert.True(site.InAwaitedCall);
        Assert.Contains("inside the awaited SemaphoreSlim.WaitAsyncCore at LockScenarios.cs:44", site.Describe(), StringComparison.Ordinal);
    }

    [Fact]
    public void Instant_OfTwoThreadsTakingTurnsAtALock_HasOneInsideIt_AndTheOtherWaiting()
    {
        // Each thread asleep inside the lock every other tick, always with the same stack, and waiting for it the other
        // ticks, in two stacks (spinning, then parked): at its own most frequent stack, each would be shown inside.
        const string inside = "sleep inside the lock", spinning = "spin for the lock", parked = "park on the lock";
        string[] waitingFor = [spinning, parked];
        var ticks = Enumerable.Range(0, 8)
            .Select(i => (IReadOnlyDictionary<int, string>)new Dictionary<int, string>
            {
                [1] = i % 2 == 0 ? inside : waitingFor[i / 2 % 2],
                [2] = i % 2 == 1 ? inside : waitingFor[i / 2 % 2],
            })
            .ToList();

        var instant = StackSnapshots.Instant(ticks);

        Assert.Equal(2, instant.Count);
        Assert.Single(instant.Values, stack => stack == inside);
        Assert.Contains(instant.Values.Single(stack => stack != inside), waitingFor);
    }

    [Fact]
    public void PoolGroupsBlockedInApp_CountsTheAppsSyncCall_NotALockInsideTheDriversAsyncCall()
    {
        string[] syncRead =
        [
            "System.Private.CoreLib!System.Threading.ManualResetEventSlim.Wait(int32,value class System.Threading.CancellationToken)",
            "System.Net.Sockets!System.Net.Sockets.Socket.Receive(unsigned int8[],int32,int32,value class System.Net.Sockets.SocketFlags)",
            "Npgsql!Npgsql.NpgsqlCommand.ExecuteNonQuery()",
            $"{App}.Sync(value class System.Nullable`1<int32>)",
        ];
        string[] lockInAsyncCall =
        [
            "System.Private.CoreLib!System.Threading.Monitor.Enter(class System.Object)",
            "Npgsql!Npgsql.Internal.NpgsqlConnector.StartUserAction(value class System.Threading.CancellationToken)",
            "Npgsql!Npgsql.NpgsqlCommand.ExecuteNonQueryAsync(value class System.Threading.CancellationToken)",
            $"{App}+<Async>d__10.MoveNext()",
        ];
        var snapshot = new StackSnapshot(0, DateTimeOffset.UtcNow, 0, 0, 2, 2, [Group(syncRead), Group(lockInAsyncCall)]);

        var blocked = Assert.Single(snapshot.PoolGroupsBlockedInApp());

        Assert.Equal("NpgsqlCommand.ExecuteNonQuery", blocked.AppCall);
        Assert.Equal(2, snapshot.BlockedPoolSites.Count);
    }

    // A DI factory's wait, as the container calls it at first (its call-site resolver) and once it has resolved the service
    // twice (the resolver it compiles, a dynamic method of its module): under load almost every call is the second kind,
    // which must still get the DI factory's fix, not a plain .Result's.
    [Theory]
    [InlineData("Microsoft.Extensions.DependencyInjection!Microsoft.Extensions.DependencyInjection.ServiceLookup.CallSiteRuntimeResolver.VisitFactory(class Microsoft.Extensions.DependencyInjection.ServiceLookup.FactoryCallSite,class Microsoft.Extensions.DependencyInjection.ServiceLookup.RuntimeResolverContext)")]
    [InlineData("Microsoft.Extensions.DependencyInjection!dynamicClass.ResolveService(pMT: 0x7f7da3186730,pMT: 0x7f7da2c36098)")]
    public void FixFor_AWaitInADiFactory_IsTheContainersFix_WhicheverResolverCallsIt(string container)
    {
        // Leaf first, from a real snapshot of difactory under load.
        string[] frames =
        [
            "System.Private.CoreLib!System.Threading.Tasks.Task.InternalWait(int32,value class System.Threading.CancellationToken)",
            "System.Private.CoreLib!System.Threading.Tasks.Task`1[System.__Canon].GetResultCore(bool)",
            "DiagnosticScenarios!DiagnosticScenarios.Scenarios.Blocking.DiFactoryScenarios+<>c.<AddTenantSettings>b__0_0(class System.IServiceProvider)",
            container,
            "Microsoft.Extensions.DependencyInjection!Microsoft.Extensions.DependencyInjection.ServiceProvider.GetService(value class Microsoft.Extensions.DependencyInjection.ServiceLookup.ServiceIdentifier,class Microsoft.Extensions.DependencyInjection.ServiceLookup.ServiceProviderEngineScope)",
        ];
        var appFrame = new AppFrame(FrameNames.TypeAndMethod(frames[2]), new SourceLine("DiFactoryScenarios.cs", 61, null), null);

        var fix = BlockingFrame.FixFor(BlockingFrame.Find(frames), frames, appFrame, underTaskRun: false);

        Assert.Equal(BlockingKind.TaskWait, BlockingFrame.Find(frames)?.Kind);
        Assert.True(fix?.EndsWith("(/api/blocking/difactory → difactory-async)", StringComparison.Ordinal) == true, fix);
    }

    // Leaf first, from a snapshot of the sync shape on the embedded responder (docs/sql.md): threads queued in SqlClient's
    // connection pool inside the action's Open, and threads in the command's socket read. The waits are the driver's; the
    // fix is the twin of the call the action made, not of the wait primitive beneath it.
    public static TheoryData<string, string[]> WaitsInsideADriverCall => new()
    {
        {
            "OpenAsync",
            [
                "System.Private.CoreLib!System.Threading.WaitHandle.WaitMultiple(value class System.ReadOnlySpan`1<class System.Threading.WaitHandle>,bool,int32)",
                "Microsoft.Data.SqlClient!Microsoft.Data.SqlClient.ConnectionPool.WaitHandleDbConnectionPool.TryGetConnection(class System.Data.Common.DbConnection,unsigned int32,bool,bool,class Microsoft.Data.ProviderBase.TimeoutTimer,class Microsoft.Data.ProviderBase.DbConnectionInternal&)",
                "Microsoft.Data.SqlClient!Microsoft.Data.SqlClient.SqlConnection.TryOpen(class System.Threading.Tasks.TaskCompletionSource`1<class Microsoft.Data.ProviderBase.DbConnectionInternal>,bool,value class Microsoft.Data.SqlClient.SqlConnectionOverrides)",
                "Microsoft.Data.SqlClient!Microsoft.Data.SqlClient.SqlConnection.Open()",
                $"{App}.Sync(value class System.Nullable`1<int32>)",
            ]
        },
        {
            "ExecuteNonQueryAsync",
            [
                "System.Private.CoreLib!System.Threading.ManualResetEventSlim.Wait(int32,value class System.Threading.CancellationToken)",
                "System.Net.Sockets!System.Net.Sockets.Socket.Receive(unsigned int8[],int32,int32,value class System.Net.Sockets.SocketFlags)",
                "System.Net.Sockets!System.Net.Sockets.NetworkStream.Read(unsigned int8[],int32,int32)",
                "Microsoft.Data.SqlClient!Microsoft.Data.SqlClient.SqlCommand.ExecuteNonQuery()",
                $"{App}.Sync(value class System.Nullable`1<int32>)",
            ]
        },
    };

    [Theory]
    [MemberData(nameof(WaitsInsideADriverCall))]
    public void FixFor_AWaitInsideADriversSynchronousCall_IsThatCallsAsyncTwin_NotTheWaitPrimitives(string twin, string[] frames)
    {
        var appFrame = new AppFrame(FrameNames.TypeAndMethod(frames[^1]), new SourceLine("SqlScenarioController.cs", 42, null), null);
        var blocking = BlockingFrame.Find(frames)!;

        var fix = BlockingFrame.FixFor(blocking, frames, appFrame, underTaskRun: false);

        Assert.True(fix is not null && fix.Contains($"call its async twin, {twin},", StringComparison.Ordinal)
            && fix.EndsWith("(/api/sqlscenario/sync → async)", StringComparison.Ordinal), $"{blocking.Kind}: {fix}");
    }

    [Fact]
    public void FixFor_AWaitTheAppMadeItself_OrThroughAThreadingType_IsTheWaitKinds()
    {
        string[] ownWait =
        [
            "System.Private.CoreLib!System.Threading.WaitHandle.WaitOneNoCheck(int32,bool,class System.Object,value class WaitSource)",
            "System.Private.CoreLib!System.Threading.WaitHandle.WaitOne()",
            $"{App}.Sync(value class System.Nullable`1<int32>)",
        ];
        string[] countdown =
        [
            "System.Private.CoreLib!System.Threading.ManualResetEventSlim.Wait(int32,value class System.Threading.CancellationToken)",
            "System.Private.CoreLib!System.Threading.CountdownEvent.Wait(int32,value class System.Threading.CancellationToken)",
            "System.Private.CoreLib!System.Threading.CountdownEvent.Wait()",
            $"{App}.Sync(value class System.Nullable`1<int32>)",
        ];

        var fixes = new[] { ownWait, countdown }.Select(frames => BlockingFrame.FixFor(
            BlockingFrame.Find(frames), frames, new AppFrame(FrameNames.TypeAndMethod(frames[^1]), null, null), underTaskRun: false));

        Assert.Equal([BlockingFrame.FixFor(BlockingKind.WaitHandle), BlockingFrame.FixFor(BlockingKind.ManualResetEventSlim)], fixes);
    }

    [Fact]
    public void FixFor_AnAppMethodSleepingWhereItsTypeHasAnAsyncTwin_IsTheTwins_WithoutOneTheSleeps()
    {
        string[] frames =
        [
            "System.Private.CoreLib!System.Threading.Thread.Sleep(int32)",
            "Northwind.Data!Northwind.Data.Ledger.Read(value class System.TimeSpan)",
            "Northwind.Web!Northwind.Web.LedgerController.Get()",
        ];
        var read = new AppFrame("Ledger.Read", null, null);

        var withTwin = BlockingFrame.FixFor(BlockingFrame.Find(frames), frames, read with { AsyncTwin = "ReadAsync" }, underTaskRun: false);
        var without = BlockingFrame.FixFor(BlockingFrame.Find(frames), frames, read, underTaskRun: false);
        var inTaskRun = BlockingFrame.FixFor(BlockingFrame.Find(frames), frames, read with { AsyncTwin = "ReadAsync" }, underTaskRun: true);

        Assert.Equal(BlockingFrame.AsyncTwinFix("Ledger.Read", "ReadAsync"), withTwin);
        Assert.Contains("async twin, ReadAsync:", withTwin, StringComparison.Ordinal);
        Assert.Equal(BlockingFrame.FixFor(BlockingKind.Sleep), without);
        Assert.Equal(BlockingFrame.TaskRunFix, inTaskRun);

        // The same sleep in Read inlined into its caller, the frame left: the twin is still Read's.
        var caller = new AppFrame("LedgerController.Get", null, null) { Inlined = read with { AsyncTwin = "ReadAsync" } };
        Assert.Equal(withTwin, BlockingFrame.FixFor(BlockingFrame.Find(frames), frames, caller, underTaskRun: false));
    }

    // Each fix ends with the pair that shows it, "(BAD route → GOOD twin)", typed beside the fix: every one must be a BAD
    // scenario of the catalogue and a GOOD one of its family, its twin where the catalogue names one, so a renamed route or
    // twin cannot leave a fix pointing at nothing.
    [Fact]
    public void EveryFixsPair_IsABadScenarioOfTheCatalogue_AndItsTwin()
    {
        var code = File.ReadAllText(Path.Combine(RepositoryPaths.Root, "src", "DiagnosticScenarios.BlockingAnalysis", "BlockingFrame.cs"));
        var pairs = System.Text.RegularExpressions.Regex.Matches(code, @"\((/api/[^ )]+) → ([^ )]+)\)")
            .Select(m => (Bad: m.Groups[1].Value, Good: m.Groups[2].Value))
            .Distinct()
            .ToList();

        // The GOOD side is a GOOD scenario of the BAD one's family, its twin where the catalogue names one.
        var wrong = pairs.Where(pair =>
            {
                var good = pair.Bad[..(pair.Bad.LastIndexOf('/') + 1)] + pair.Good;
                return ScenarioCatalogue.Scenarios.SingleOrDefault(s => s.Route == pair.Bad) is not { Verdict: ScenarioVerdict.Bad } bad
                    || (bad.Twin ?? good) != good
                    || ScenarioCatalogue.Scenarios.SingleOrDefault(s => s.Route == good) is not { Verdict: ScenarioVerdict.Good };
            })
            .Select(pair => $"({pair.Bad} → {pair.Good})")
            .ToList();

        Assert.True(pairs.Count >= 10, $"only {pairs.Count} pairs found in BlockingFrame.cs: the pattern no longer reads them");
        Assert.True(wrong.Count == 0, $"fixes pointing at no BAD scenario and its twin: {string.Join(", ", wrong)}");
    }

    // `await Task.Delay` contends for the timer queue's lock for a moment: that is not a lock of the app's, though Task.Delay's
    // name does not say it is awaited.
    [Fact]
    public void FixFor_ALockInsideAnAwaitedTaskDelay_IsNone_ForTheWaitIsTheTimersNotTheApps()
    {
        string[] frames =
        [
            "System.Private.CoreLib!System.Threading.Monitor.Enter_Slowpath(class System.Object)",
            "System.Private.CoreLib!System.Threading.TimerQueueTimer.Change(unsigned int32,unsigned int32)",
            "System.Private.CoreLib!System.Threading.Tasks.Task+DelayPromise..ctor(unsigned int32,class System.TimeProvider)",
            "System.Private.CoreLib!System.Threading.Tasks.Task.Delay(value class System.TimeSpan)",
            "Contoso.Orders!Contoso.Orders.OrderRepository+<LoadAsync>d__2.MoveNext()",
        ];
        var appFrame = new AppFrame(FrameNames.TypeAndMethod(frames[^1]), null, null);

        Assert.Equal("Task.Delay", BlockingFrame.CallMadeBy(frames, appFrame));
        Assert.True(BlockingFrame.IsAwaitedCall("Task.Delay"));
        Assert.Null(BlockingFrame.FixFor(BlockingFrame.Find(frames), frames, appFrame, underTaskRun: false));
    }

    // A lock taken in a Task.Run delegate gets a lock's fix, not the one for blocking I/O under Task.Run.
    [Fact]
    public void FixFor_ALockTakenInsideTaskRun_IsTheLocksFix_AndASleepThereTheTaskRunFix()
    {
        string[] frames =
        [
            "System.Private.CoreLib!System.Threading.Lock.EnterScope()",
            "Northwind.Ledger!Northwind.Ledger.Journal.Post(int32)",
            "Northwind.Ledger!Northwind.Ledger.Journal+<>c.<PostLater>b__1_0()",
        ];
        var post = new AppFrame("Journal.Post", null, null);
        string[] sleeping = ["System.Private.CoreLib!System.Threading.Thread.Sleep(int32)", .. frames[1..]];

        Assert.Equal(BlockingFrame.FixFor(BlockingKind.Monitor), BlockingFrame.FixFor(BlockingFrame.Find(frames), frames, post, underTaskRun: true));
        Assert.Equal(BlockingFrame.TaskRunFix, BlockingFrame.FixFor(BlockingFrame.Find(sleeping), sleeping, post, underTaskRun: true));
    }

    [Fact]
    public void Where_NamesTheInlinedMethodsLineFirst_ThenTheFrameThatHoldsItsCode()
    {
        var restock = new AppFrame("Shelf.Restock", new SourceLine("/src/Shelf.cs", 9, "var counted = Count();"), null)
        {
            Inlined = new AppFrame("Shelf.Count", new SourceLine("/src/Shelf.cs", 30, "System.Threading.Thread.Sleep(_delay);"), null),
        };

        Assert.Equal(
            " at Shelf.cs:30 `System.Threading.Thread.Sleep(_delay);` in Shelf.Count, which the JIT inlined into Shelf.Restock (Shelf.cs:9) ← ShelfController.Post (ShelfController.cs:14)",
            BlockingSite.Where([restock, new AppFrame("ShelfController.Post", new SourceLine("/src/ShelfController.cs", 14, "shelf.Restock();"), null)], null));
    }

    private static ThreadGroup Group(string[] framesLeafFirst)
    {
        var appFrame = new AppFrame(FrameNames.TypeAndMethod(framesLeafFirst[^1]), new SourceLine("SqlScenarioController.cs", 1, null), null);
        return new ThreadGroup(1, PoolThreads: true, BlockingFrame.Find(framesLeafFirst), [appFrame], [1], framesLeafFirst);
    }
}
