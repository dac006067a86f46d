using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Blocking;
using DiagnosticScenarios.Scenarios.Mock;
using DiagnosticScenarios.Scenarios.Sql;

namespace DiagnosticScenarios.Scenarios.Catalogue;

/// <summary>
/// Every scenario the app serves, defined once: its route, family, verdict, the code shape and why it behaves as it
/// does, the action that serves it, and which analyzer rules flag its BAD line. The load control's allow-list, the live
/// page, the load runner's default lists (through <c>GET /api/scenarios</c>) and the tests' data all read it.
/// </summary>
public static class ScenarioCatalogue
{
    public static ScenarioFamily Mock { get; } = new("mock", "/api/diagscenario/", ScenarioOptions.DefaultMockDelayMs, Loadable: true);

    public static ScenarioFamily Sql { get; } = new("sql", "/api/sqlscenario/", SqlScenarioController.DefaultDelayMs, Loadable: true);

    public static ScenarioFamily Tutorial { get; } = new("tutorial", "/api/diagscenario/", DefaultDelayMs: null, Loadable: false);

    /// <summary>BAD/GOOD pairs around blocking primitives; each pair has defaults of its own (<see cref="BlockingDefaults"/>).</summary>
    public static ScenarioFamily Blocking { get; } = new("blocking", "/api/blocking/", DefaultDelayMs: null, Loadable: true);

    public static IReadOnlyList<ScenarioFamily> Families { get; } = [Mock, Sql, Tutorial, Blocking];

    /// <summary>In the order the page lists them and <c>compare</c> measures them, with the built-in mock delay.</summary>
    public static IReadOnlyList<Scenario> Scenarios { get; } = Build(ScenarioOptions.DefaultMockDelayMs);

    /// <summary>
    /// The catalogue as a server serves it (<c>GET /api/scenarios</c>), its mock query taking <paramref name="mockDelayMs"/>
    /// (<c>Scenarios:MockDelayMs</c>): the mock family's default delay, and intermittent's, which is its twin's.
    /// </summary>
    public static CatalogueAnswer Served(int mockDelayMs) =>
        new([.. Families.Select(f => f == Mock ? f with { DefaultDelayMs = mockDelayMs } : f)], Build(mockDelayMs));

    // Every scenario, the ones whose query is the mock family's waiting mockDelayMs.
    private static List<Scenario> Build(int mockDelayMs) =>
    [
        Starvation("taskwait", ScenarioVerdict.Bad, nameof(StarvationScenariosController.TaskWait),
            "a sync action reads .Result on the async query (sync-over-async)",
            "holds a pool thread for the whole wait; since .NET 6 the pool injects threads faster for Task waits (cooperative blocking), so it degrades less than the others")
            with { Runtime = new RuntimeView(PoolCompensates: true, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Vsthrd002, AnalyzerRules.Dsb002] },
        Starvation("tasksleepwait", ScenarioVerdict.Bad, nameof(StarvationScenariosController.TaskSleepWait),
            "a sync action polls while (!task.IsCompleted) Thread.Sleep(10)",
            "a block the pool does not recognise: thread injection falls back to one or two threads a second")
            with { Runtime = new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: false, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Dsb003] },
        Starvation("taskasyncwait", ScenarioVerdict.Good, nameof(StarvationScenariosController.TaskAsyncWait),
            "an async action awaits the query",
            "no thread is held while the query is in flight"),
        Starvation("syncio", ScenarioVerdict.Bad, nameof(StarvationScenariosController.SyncIo),
            "a sync action calls a blocking driver method",
            "the classic sync-I/O handler; no runtime compensation at all")
            with { Runtime = new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: false, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Dsb001] },
        Starvation("asyncsyncio", ScenarioVerdict.Bad, nameof(StarvationScenariosController.AsyncSyncIo),
            "an async Task action with the blocking driver call inside",
            "an async signature does not make blocking code asynchronous")
            with { Runtime = new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: false, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Vsthrd103, AnalyzerRules.Ca1849, AnalyzerRules.Ma0042, AnalyzerRules.Dsb001] },
        Starvation("taskrunwait", ScenarioVerdict.Bad, nameof(StarvationScenariosController.TaskRunWait),
            "await Task.Run(() => blocking query)",
            "fake async: frees the request thread by blocking another pool thread; only MA0045, off by default, flags the call in the lambda")
            with { Runtime = new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: false, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Ma0045, AnalyzerRules.Dsb006] },
        Starvation("getawaiterresult", ScenarioVerdict.Bad, nameof(StarvationScenariosController.GetAwaiterResult),
            ".GetAwaiter().GetResult() on the async query",
            "the same block as .Result, without the AggregateException wrapping")
            with { Runtime = new RuntimeView(PoolCompensates: true, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Vsthrd002, AnalyzerRules.Dsb002] },
        Starvation("ping", ScenarioVerdict.Baseline, nameof(StarvationScenariosController.Ping),
            "answers at once, no query",
            "the collateral-damage probe: under starvation even this gets slow"),
        SqlShape("sync", ScenarioVerdict.Bad, nameof(SqlScenarioController.Sync),
            "a sync action runs command.ExecuteNonQuery()",
            "the driver blocks the pool thread in a socket read for the whole query; the pool gets no signal")
            with { Runtime = new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Dsb001] },
        SqlShape("asyncsyncio", ScenarioVerdict.Bad, nameof(SqlScenarioController.AsyncSyncIo),
            "an async Task action with a synchronous ExecuteNonQuery() inside",
            "an async signature does not make a blocking driver call asynchronous")
            with { Runtime = new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Vsthrd103, AnalyzerRules.Ca1849, AnalyzerRules.Ma0042, AnalyzerRules.AsyncFixer02, AnalyzerRules.Dsb001] },
        SqlShape("taskrun", ScenarioVerdict.Bad, nameof(SqlScenarioController.TaskRun),
            "await Task.Run(() => command.ExecuteNonQuery())",
            "frees the request thread by blocking another pool thread for the whole query")
            with { Runtime = new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Ma0042, AnalyzerRules.Dsb006] },
        SqlShape("wait", ScenarioVerdict.Bad, nameof(SqlScenarioController.Wait),
            "command.ExecuteNonQueryAsync().Wait()",
            "the I/O is asynchronous but the pool thread waits for it (sync-over-async)")
            with { Runtime = new RuntimeView(PoolCompensates: true, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Vsthrd002, AnalyzerRules.Dsb002] },
        SqlShape("async", ScenarioVerdict.Good, nameof(SqlScenarioController.Async),
            "await command.ExecuteNonQueryAsync(cancellationToken)",
            "no thread is held while the query runs"),
        new("taskburst", "/api/diagscenario/taskburst", Tutorial.Name, ScenarioVerdict.Bad,
            Action(nameof(StarvationScenariosController), nameof(StarvationScenariosController.TaskBurst)),
            "N tasks that each wait by .Wait() inside Task.Run (mode=blocking), or by await (mode=async, the GOOD twin)",
            "blocking needs a thread per task and each timer completion queues behind the tasks not yet started; async finishes in about one delay")
            { Runtime = new RuntimeView(PoolCompensates: true, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true), FlaggedBy = [AnalyzerRules.Vsthrd002, AnalyzerRules.Ma0042, AnalyzerRules.Dsb006] },
        TutorialEndpoint("deadlock", ScenarioVerdict.Bad, nameof(DiagnosticsTutorialsController.Deadlock),
            $"two threads take two locks in opposite order, {DeadlockScenario.WaitingThreads} more queue on the first",
            "for the debug-deadlock tutorial (dotnet-dump, syncblk); at most one per process"),
        TutorialEndpoint("highcpu/{milliseconds}", ScenarioVerdict.Bad, nameof(DiagnosticsTutorialsController.HighCpu),
            "one thread spins for the given time",
            "for the high-CPU tutorial (dotnet-counters, dotnet-trace)"),
        TutorialEndpoint("memspike/{seconds}", ScenarioVerdict.Bad, nameof(DiagnosticsTutorialsController.MemSpike),
            "allocates and frees millions of objects in waves",
            "for the memory tutorials: the GC heap rises and falls"),
        TutorialEndpoint("memleak/{kb}", ScenarioVerdict.Bad, nameof(DiagnosticsTutorialsController.MemLeak),
            "roots about kb kilobytes of Customer objects in a static cache",
            "for the memory-leak tutorial (dotnet-dump, gcroot); capped per process by Scenarios:MemLeakCapKb"),
        TutorialEndpoint("exception", ScenarioVerdict.Bad, nameof(DiagnosticsTutorialsController.Exception),
            "throws Exception(\"bad, bad code\")",
            "a deliberate 500, answered as ProblemDetails"),
        .. BlockingPair("lock", "lock-async", Action(nameof(LockScenariosController), nameof(LockScenariosController.Lock)),
            "a lock held across a blocking query",
            "every request behind the holder parks a pool thread on the lock, which gives the pool no signal; the lock serves one request per delay either way, so what suffers is everything else the app serves",
            Action(nameof(LockScenariosController), nameof(LockScenariosController.LockAsync)),
            "SemaphoreSlim(1) WaitAsync held across the awaited query",
            "the requests behind the holder wait in the semaphore's queue, holding no thread",
            new Dictionary<string, int> { ["delayMs"] = BlockingDefaults.LockDelayMs, ["throttle"] = 1 },
            new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true),
            flaggedBy: [AnalyzerRules.Dsb001, AnalyzerRules.Dsb005]),
        .. BlockingPair("semaphore", "semaphore-async", Action(nameof(SemaphoreScenariosController), nameof(SemaphoreScenariosController.Semaphore)),
            $"a throttle of {BlockingDefaults.SemaphoreThrottle} concurrent queries waited for with SemaphoreSlim.Wait()",
            "the threads parked in Wait() are the ones the awaited queries need to finish and free their slots: the throttle's own traffic starves it",
            Action(nameof(SemaphoreScenariosController), nameof(SemaphoreScenariosController.SemaphoreAsync)),
            "the same throttle waited for with await WaitAsync()",
            "a request waiting for a slot holds no thread; the throttle lets its queries through at its own pace",
            new Dictionary<string, int> { ["delayMs"] = BlockingDefaults.SemaphoreDelayMs, ["throttle"] = BlockingDefaults.SemaphoreThrottle },
            new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true),
            flaggedBy: [AnalyzerRules.Vsthrd103, AnalyzerRules.Ca1849, AnalyzerRules.Ma0042, AnalyzerRules.AsyncFixer02, AnalyzerRules.Dsb001]),
        .. BlockingPair("httpclient", "httpclient-async", Action(nameof(HttpClientScenariosController), nameof(HttpClientScenariosController.Send)),
            "the synchronous HttpClient.Send to a slow upstream",
            "the pool thread waits for the whole call: under load first for a new connection, which the handler opens on the very pool it starves and waits for with GetAwaiter().GetResult() inside Send, then in a socket read",
            Action(nameof(HttpClientScenariosController), nameof(HttpClientScenariosController.SendAsync)),
            "await HttpClient.SendAsync to the same upstream",
            "no thread is held while the upstream takes its time",
            Delay(BlockingDefaults.HttpClientDelayMs),
            // Whether the pool helps depends on where the first threads wait: for a new connection, with
            // GetAwaiter().GetResult() (it helps), or in a pooled connection's socket read (it does not); so it varies from run to run.
            new RuntimeView(PoolCompensates: null, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true),
            flaggedBy: [AnalyzerRules.Dsb001]),
        .. BlockingPair("bodyread", "bodyread-async", Action(nameof(BodyReadScenariosController), nameof(BodyReadScenariosController.BodyRead)),
            "POST: reads a slowly uploaded body with StreamReader.ReadToEnd, AllowSynchronousIO switched on for the request",
            "the pool thread waits for every piece of the upload (Kestrel's synchronous read is its asynchronous one waited for); AllowSynchronousIO is the switch real apps flip to make old code \"work\"",
            Action(nameof(BodyReadScenariosController), nameof(BodyReadScenariosController.BodyReadAsync)),
            "POST: reads the same body with await ReadToEndAsync",
            "no thread is held between the pieces of the upload",
            defaults: null,
            new RuntimeView(PoolCompensates: true, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true),
            new ScenarioLoad("POST", BlockingDefaults.BodyReadBytes, BlockingDefaults.BodyReadUploadMs),
            [AnalyzerRules.Dsb001]),
        .. BlockingPair("blockingcollection", "channel", Action(nameof(BlockingCollectionScenariosController), nameof(BlockingCollectionScenariosController.Take)),
            "BlockingCollection.Take() on the request thread for a background worker's reply",
            "the request thread is parked until the reply comes, and the worker replies from the pool those threads starve",
            Action(nameof(BlockingCollectionScenariosController), nameof(BlockingCollectionScenariosController.ReadAsync)),
            "await Channel.Reader.ReadAsync for the same reply",
            "no thread waits for the reply",
            Delay(BlockingDefaults.BlockingCollectionDelayMs),
            new RuntimeView(PoolCompensates: false, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true),
            flaggedBy: [AnalyzerRules.Dsb004]),
        .. BlockingPair("difactory", "difactory-async", Action(nameof(DiFactoryScenarios), nameof(DiFactoryScenarios.AddTenantSettings)),
            ".Result inside a DI factory resolved per request",
            "a factory cannot await, so resolving the request's services parks a pool thread for the whole load, where a reader of the action never looks",
            Action(nameof(DiFactoryScenariosController), nameof(DiFactoryScenariosController.LoadAsync)),
            "the action awaits the asynchronous load itself",
            "no thread is held while the store takes its time",
            Delay(BlockingDefaults.DiFactoryDelayMs),
            new RuntimeView(PoolCompensates: true, RaisesWaitHandleWait: true, SnapshotNamesIt: true, RuleDeclaresIt: true, NamedToTheLine: true),
            flaggedBy: [AnalyzerRules.Vsthrd002, AnalyzerRules.Ma0045, AnalyzerRules.Dsb002]),
        Intermittent(mockDelayMs),
    ];

    /// <summary>What the live page may point the load runner at: the query families' scenarios, never an arbitrary URL.</summary>
    public static IReadOnlyList<Scenario> Loadable { get; } =
        [.. Scenarios.Where(s => Families.Single(f => f.Name == s.Family).Loadable)];

    public static ScenarioFamily? FindFamily(string name) =>
        Families.FirstOrDefault(f => string.Equals(f.Name, name, StringComparison.OrdinalIgnoreCase));

    public static IEnumerable<Scenario> InFamily(ScenarioFamily family) => Scenarios.Where(s => s.Family == family.Name);

    private static Scenario Starvation(string name, ScenarioVerdict verdict, string action, string pattern, string why) =>
        new(name, Mock.RoutePrefix + name, Mock.Name, verdict, Action(nameof(StarvationScenariosController), action), pattern, why);

    private static Scenario SqlShape(string name, ScenarioVerdict verdict, string action, string pattern, string why) =>
        new(name, Sql.RoutePrefix + name, Sql.Name, verdict, Action(nameof(SqlScenarioController), action), pattern, why);

    private static Scenario TutorialEndpoint(string route, ScenarioVerdict verdict, string action, string pattern, string why) =>
        new(route.Split('/')[0], Tutorial.RoutePrefix + route, Tutorial.Name, verdict, Action(nameof(DiagnosticsTutorialsController), action), pattern, why);

    private static string Action(string controller, string action) => $"{controller}.{action}";

    // Its query is the mock family's, its GOOD twin taskasyncwait: the two wait as long as each other.
    private static Scenario Intermittent(int mockDelayMs) =>
        new Scenario("intermittent", Blocking.RoutePrefix + "intermittent", Blocking.Name, ScenarioVerdict.Bad,
            Action(nameof(IntermittentScenarioController), nameof(IntermittentScenarioController.Intermittent)),
            "one request in every (?every=N) reads .Result on the query, the others await it",
            "blocking that comes and goes: a single stack snapshot may find no thread parked, a wait trace over a few seconds names it",
            Twin: Mock.RoutePrefix + "taskasyncwait",
            Defaults: new Dictionary<string, int> { ["delayMs"] = mockDelayMs, ["every"] = BlockingDefaults.IntermittentEvery })
        with
        {
            Runtime = new RuntimeView(PoolCompensates: null, RaisesWaitHandleWait: true, SnapshotNamesIt: null, RuleDeclaresIt: false, NamedToTheLine: null),
            FlaggedBy = [AnalyzerRules.Vsthrd103, AnalyzerRules.Ca1849, AnalyzerRules.Ma0042, AnalyzerRules.AsyncFixer02, AnalyzerRules.Dsb002],
        };

    private static Dictionary<string, int> Delay(int delayMs) => new() { ["delayMs"] = delayMs };

    // A BAD scenario and its GOOD twin, side by side, with the same defaults and the same way of loading them.
    private static IEnumerable<Scenario> BlockingPair(
        string bad, string good,
        string badAction, string badPattern, string badWhy,
        string goodAction, string goodPattern, string goodWhy,
        Dictionary<string, int>? defaults, RuntimeView runtime, ScenarioLoad? load = null, IReadOnlyList<string>? flaggedBy = null) =>
    [
        new(bad, Blocking.RoutePrefix + bad, Blocking.Name, ScenarioVerdict.Bad, badAction, badPattern, badWhy, Blocking.RoutePrefix + good, defaults, load)
        {
            FlaggedBy = flaggedBy ?? [],
            Runtime = runtime,
        },
        new(good, Blocking.RoutePrefix + good, Blocking.Name, ScenarioVerdict.Good, goodAction, goodPattern, goodWhy, Twin: null, defaults, load),
    ];
}
