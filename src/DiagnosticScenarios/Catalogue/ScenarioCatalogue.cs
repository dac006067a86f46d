using DiagnosticScenarios.Scenarios;
using DiagnosticScenarios.Sql;

namespace DiagnosticScenarios.Catalogue;

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

    public static IReadOnlyList<ScenarioFamily> Families { get; } = [Mock, Sql, Tutorial];

    /// <summary>In the order the page lists them and <c>compare</c> measures them.</summary>
    public static IReadOnlyList<Scenario> Scenarios { get; } =
    [
        Starvation("taskwait", ScenarioVerdict.Bad, nameof(StarvationScenariosController.TaskWait),
            "a sync action reads .Result on the async query (sync-over-async)",
            "holds a pool thread for the whole wait; since .NET 6 the pool injects threads faster for Task waits (cooperative blocking), so it degrades less than the others")
            with { FlaggedBy = [AnalyzerRules.Vsthrd002] },
        Starvation("tasksleepwait", ScenarioVerdict.Bad, nameof(StarvationScenariosController.TaskSleepWait),
            "a sync action polls while (!task.IsCompleted) Thread.Sleep(10)",
            "a block the pool does not recognise: thread injection falls back to one or two threads a second"),
        Starvation("taskasyncwait", ScenarioVerdict.Good, nameof(StarvationScenariosController.TaskAsyncWait),
            "an async action awaits the query",
            "no thread is held while the query is in flight"),
        Starvation("syncio", ScenarioVerdict.Bad, nameof(StarvationScenariosController.SyncIo),
            "a sync action calls a blocking driver method",
            "the classic sync-I/O handler; no runtime compensation at all"),
        Starvation("asyncsyncio", ScenarioVerdict.Bad, nameof(StarvationScenariosController.AsyncSyncIo),
            "an async Task action with the blocking driver call inside",
            "an async signature does not make blocking code asynchronous")
            with { FlaggedBy = [AnalyzerRules.Vsthrd103, AnalyzerRules.Ca1849, AnalyzerRules.Ma0042] },
        Starvation("taskrunwait", ScenarioVerdict.Bad, nameof(StarvationScenariosController.TaskRunWait),
            "await Task.Run(() => blocking query)",
            "fake async: frees the request thread by blocking another pool thread; only MA0045, off by default, flags the call in the lambda")
            with { FlaggedBy = [AnalyzerRules.Ma0045] },
        Starvation("getawaiterresult", ScenarioVerdict.Bad, nameof(StarvationScenariosController.GetAwaiterResult),
            ".GetAwaiter().GetResult() on the async query",
            "the same block as .Result, without the AggregateException wrapping")
            with { FlaggedBy = [AnalyzerRules.Vsthrd002] },
        Starvation("ping", ScenarioVerdict.Baseline, nameof(StarvationScenariosController.Ping),
            "answers at once, no query",
            "the collateral-damage probe: under starvation even this gets slow"),
        SqlShape("sync", ScenarioVerdict.Bad, nameof(SqlScenarioController.Sync),
            "a sync action runs command.ExecuteNonQuery()",
            "the driver blocks the pool thread in a socket read for the whole query; the pool gets no signal"),
        SqlShape("asyncsyncio", ScenarioVerdict.Bad, nameof(SqlScenarioController.AsyncSyncIo),
            "an async Task action with a synchronous ExecuteNonQuery() inside",
            "an async signature does not make a blocking driver call asynchronous")
            with { FlaggedBy = [AnalyzerRules.Vsthrd103, AnalyzerRules.Ca1849, AnalyzerRules.Ma0042, AnalyzerRules.AsyncFixer02] },
        SqlShape("taskrun", ScenarioVerdict.Bad, nameof(SqlScenarioController.TaskRun),
            "await Task.Run(() => command.ExecuteNonQuery())",
            "frees the request thread by blocking another pool thread for the whole query")
            with { FlaggedBy = [AnalyzerRules.Ma0042] },
        SqlShape("wait", ScenarioVerdict.Bad, nameof(SqlScenarioController.Wait),
            "command.ExecuteNonQueryAsync().Wait()",
            "the I/O is asynchronous but the pool thread waits for it (sync-over-async)")
            with { FlaggedBy = [AnalyzerRules.Vsthrd002] },
        SqlShape("async", ScenarioVerdict.Good, nameof(SqlScenarioController.Async),
            "await command.ExecuteNonQueryAsync(cancellationToken)",
            "no thread is held while the query runs"),
        new("taskburst", "/api/diagscenario/taskburst", Tutorial.Name, ScenarioVerdict.Bad,
            Action(nameof(StarvationScenariosController), nameof(StarvationScenariosController.TaskBurst)),
            "N tasks that each wait by .Wait() inside Task.Run (mode=blocking), or by await (mode=async, the GOOD twin)",
            "blocking needs a thread per task and each timer completion queues behind the tasks not yet started; async finishes in about one delay")
            { FlaggedBy = [AnalyzerRules.Vsthrd002, AnalyzerRules.Ma0042] },
        TutorialEndpoint("deadlock", ScenarioVerdict.Bad, nameof(DiagnosticsTutorialsController.Deadlock),
            "two threads take two locks in opposite order, 300 more queue on the first",
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
}
