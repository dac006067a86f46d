namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>How an observed run ends.</summary>
internal enum RunEnd
{
    /// <summary>The runner finishes its duration and drains its requests; the run ends when the app reports it ended.</summary>
    RunnerExits,

    /// <summary>
    /// The run ends after the load's duration by disposing the server, which kills its runner child: the server would stay
    /// starved for a minute after the load, and nothing more is learnt by waiting.
    /// </summary>
    ServerDisposed,
}

/// <summary>One scenario's observed run: the load the page starts, how long it lasts, how it ends and what else it records.</summary>
/// <param name="Scenario">As the page's load control names it (<c>diagscenario/taskwait</c>).</param>
/// <param name="LoadSeconds">The load's duration, as the page asks the runner for it.</param>
/// <param name="End">How the run ends.</param>
internal sealed record RunPlan(string Scenario, int LoadSeconds, RunEnd End)
{
    /// <summary>The tutorial's load: enough connections to hold every thread a cold pool on two processors has.</summary>
    public const int Connections = DiagnosticScenarios.Common.ScenarioLimits.DefaultConnections;

    /// <summary>
    /// Ten seconds, the tutorial's: long enough for the alert, whose condition must hold for a few seconds once the queue
    /// has grown, to fire, and for watch to name the site. The run ends when the runner has had every answer: taskwait's
    /// requests come back in waves seconds apart, and the requests still in flight keep the pool starved until theirs, so a
    /// run whose duration ends just after a wave waits for a whole wave more. Its pool has recovered when the runner ends, so a
    /// capture asked for then is taken at once.
    /// </summary>
    public static RunPlan TaskWait { get; } = new("diagscenario/taskwait", 10, RunEnd.RunnerExits)
    {
        Watched = true,
        CapturesStacksAfterTheLoad = true,
        RecordsWaits = true,
        Scraped = true,
    };

    /// <summary>
    /// Ten seconds of load; the pool, which grows by about two threads a second here, stays starved long after. The
    /// dotnet-trace metrics session records this run: the runtime's metrics event source serves one session at a time,
    /// and the other two runs have the watch's. Its metrics also go out over OTLP, whose exporter has a thread of its own.
    /// </summary>
    public static RunPlan TaskSleepWait { get; } = new("diagscenario/tasksleepwait", 10, RunEnd.ServerDisposed) { RecordsMetrics = true, ExportsOtlp = true };

    /// <summary>The healthy control, as long as the taskwait run: nothing may fire.</summary>
    public static RunPlan TaskAsyncWait { get; } = new("diagscenario/taskasyncwait", 10, RunEnd.RunnerExits) { Watched = true, Scraped = true };

    /// <summary>Every observed run.</summary>
    public static IReadOnlyList<RunPlan> All { get; } = [TaskWait, TaskSleepWait, TaskAsyncWait];

    /// <summary>The endpoint's route, as the app's figures and log name it.</summary>
    public string Route => $"/api/{Scenario}";

    /// <summary>Whether a dotnet-trace metrics session records the app's meters during the run.</summary>
    public bool RecordsMetrics { get; init; }

    /// <summary>Whether the server exports its metrics over OTLP (<c>OTEL_EXPORTER_OTLP_ENDPOINT</c>) to a receiver of the run's.</summary>
    public bool ExportsOtlp { get; init; }

    /// <summary>Whether dotnet-trace records the runtime's wait events once the load has started, for the CLI's <c>waits</c> to read.</summary>
    public bool RecordsWaits { get; init; }

    /// <summary>Whether a real Prometheus scrapes the live page and evaluates the shipped alert rules during the run.</summary>
    public bool Scraped { get; init; }

    /// <summary>Whether the diagnosis CLI's <c>watch</c> watches the run for starvation.</summary>
    public bool Watched { get; init; }

    /// <summary>Whether a stack capture is asked for (<c>POST /api/threadpool/stacks</c>) once the load is over and the pool healthy.</summary>
    public bool CapturesStacksAfterTheLoad { get; init; }

    /// <summary>The plan of a theory's data (<c>taskwait</c>).</summary>
    public static RunPlan Named(string scenario) => scenario switch
    {
        "taskwait" => TaskWait,
        "tasksleepwait" => TaskSleepWait,
        "taskasyncwait" => TaskAsyncWait,
        _ => throw new ArgumentOutOfRangeException(nameof(scenario), scenario, "No observed run of that scenario."),
    };

    public override string ToString() => $"{Scenario} ({Connections} connections, {LoadSeconds} s)";
}
