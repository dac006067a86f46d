namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The blocking waits of a trace (.NET 9+ <c>WaitHandleWait</c> events), grouped by call site: where pool threads waited,
/// how often and for how long. <c>Thread.Sleep</c> and blocking socket reads raise no such event and never appear here.
/// </summary>
/// <param name="ProcessId">The process traced, as the trace names it.</param>
/// <param name="DurationMs">The span of the trace.</param>
/// <param name="Waits">Wait starts seen, on any thread.</param>
/// <param name="PoolWaits">Of those, on thread-pool workers.</param>
/// <param name="Sites">Call sites of the pool waits, by total wait time, most first.</param>
public sealed record WaitAnalysis(int ProcessId, double DurationMs, int Waits, int PoolWaits, IReadOnlyList<WaitSite> Sites)
{
    /// <summary>The modules in the stacks, and whether and why each is the app's code.</summary>
    public IReadOnlyList<ModuleVerdict> Modules { get; init; } = [];

    /// <summary>
    /// The thread pool's changes to its thread goal while the trace recorded, by the runtime's reason (runtime event 55):
    /// <c>Starvation</c> (no progress for 500 ms), <c>CooperativeBlocking</c> (a pool thread blocked on a Task and said so),
    /// <c>Warmup</c>, <c>ChangePoint</c>, ... Empty for a trace without the threading keyword (e.g. dotnet-trace's waithandle one).
    /// </summary>
    public IReadOnlyDictionary<string, int> PoolAdjustments { get; init; } = new Dictionary<string, int>();

    /// <summary>ASP.NET Core requests started while the trace recorded (0 for a trace without hosting events, e.g. dotnet-trace's).</summary>
    public int RequestsStarted { get; init; }

    /// <summary>
    /// The pool's seconds as the runtime's <c>System.Runtime</c> meter published them while the trace recorded, oldest
    /// first; empty for a trace recorded without them (<see cref="WaitAnalyzer.Record(int, TimeSpan, string, DiagnosisOptions?, bool)"/>).
    /// </summary>
    public IReadOnlyList<PoolSecond> Seconds { get; init; } = [];

    /// <summary>
    /// How many of <see cref="Seconds"/> had been read when <see cref="StarvationRule"/> first declared starvation over
    /// them, as the app's detector and <c>watch</c> would have; null when it never did.
    /// </summary>
    public int? StarvedAtSecond { get; init; }

    /// <summary>Events the runtime dropped from the session (<see cref="SessionLoss"/>); 0 for a complete trace.</summary>
    public int EventsLost { get; init; }

    /// <summary>What <see cref="EventsLost"/> means for this analysis; null when nothing was lost.</summary>
    public string? Incomplete => SessionLoss.Warning(EventsLost);

    /// <summary>The site where pool threads waited longest in total; null when none waited.</summary>
    public WaitSite? TopSite() => Sites.Count == 0 ? null : Sites[0];
}

/// <summary>One place pool threads waited from: the app's innermost frames with their lines, and the blocking call made there.</summary>
/// <param name="AppFrames">The app's innermost run of frames, innermost first; empty when the wait came from framework code alone or app code inlined away.</param>
/// <param name="Blocking">The outermost blocking call in the stack of the wait's start.</param>
/// <param name="Count">Waits started here.</param>
/// <param name="Unfinished">Of those, still waiting when the trace ended (their time counts up to the end).</param>
/// <param name="TotalWaitMs">Their summed duration.</param>
/// <param name="MaxWaitMs">The longest of them.</param>
/// <param name="Threads">Distinct threads that waited here.</param>
/// <param name="Frames">The stack of one start, leaf first.</param>
public sealed record WaitSite(
    IReadOnlyList<AppFrame> AppFrames,
    BlockingFrame? Blocking,
    int Count,
    int Unfinished,
    double TotalWaitMs,
    double MaxWaitMs,
    int Threads,
    IReadOnlyList<string> Frames)
{
    /// <summary>The app's innermost frame: the code that made the wait; null when there is none.</summary>
    public AppFrame? AppFrame => AppFrames.Count > 0 ? AppFrames[0] : null;

    /// <summary>The call the app's innermost frame made (<c>Type.Method</c>); null when the stack has no app frame or ends in it.</summary>
    public string? AppCall => BlockingFrame.CallMadeBy(Frames, AppFrame);

    /// <summary>Whether the wait is inside an awaited call the app made (<see cref="BlockingFrame.IsAwaitedCall"/>): the library's, for a moment.</summary>
    public bool InAwaitedCall => BlockingFrame.IsAwaitedCall(AppCall);

    /// <summary>The method compiled at run time that the JIT inlined the app's code (all of it, or the callers of its frames) into, and its caller.</summary>
    public InlinedInvoker? InlinedInto { get; init; }

    /// <summary>The app's frames further out than <see cref="AppFrames"/>, past a framework frame between them, each with its line.</summary>
    public IReadOnlyList<AppFrame> OuterAppFrames { get; init; } = [];

    /// <summary>How app frames the JIT inlined into <see cref="InlinedInto"/> were named back; null when none was (<see cref="ThreadGroup.NamedFrom"/>).</summary>
    public string? NamedFrom { get; init; }

    /// <summary>The fix for the blocking call, in one line; null when the wait is in no known blocking call.</summary>
    public string? Fix { get; init; }

    /// <summary>The request each waiting thread last started before its wait (ASP.NET Core's hosting events), most threads first; empty without them.</summary>
    public IReadOnlyList<RequestCount> Requests { get; init; } = [];

    private string Awaited => InAwaitedCall ? $" inside the awaited {AppCall}" : "";

    // The requests, when the app's frames do not say which code waited (inlined away): what the hosting events saw.
    private string Serving => AppFrames.Count == 0 && Requests.Count > 0
        ? $", last request started on these threads: {string.Join(", ", Requests.Take(3).Select(r => $"{r.Request} ({r.Threads} thread{(r.Threads == 1 ? "" : "s")})"))}"
        : "";

    /// <summary>One line: "412 waits, 205.3 s in total (max 0.5 s) on 118 threads: Task.Result / Wait (Task`1.get_Result) at StarvationScenariosController.cs:35 `…` in StarvationScenariosController.TaskWait".</summary>
    public string Describe()
    {
        var where = Blocking is null ? "no known blocking call" : Blocking.ToString();
        var unfinished = Unfinished > 0 ? $", {Unfinished} unfinished at the end" : "";
        return FormattableString.Invariant(
            $"{Count} waits, {TotalWaitMs / 1000:0.0} s in total (max {MaxWaitMs / 1000:0.00} s{unfinished}) on {Threads} thread{(Threads == 1 ? "" : "s")}: {where}{Awaited}{BlockingSite.Where(AppFrames, InlinedInto, NamedFrom)}{Serving}");
    }
}
