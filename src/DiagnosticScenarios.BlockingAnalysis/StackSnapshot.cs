namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Every managed thread of a process at one moment, grouped by identical stack, most threads first
/// (what Visual Studio's Parallel Stacks shows), each group with the call it is parked in and the app's code that made it.
/// </summary>
/// <param name="ProcessId">The process sampled, as the trace names it.</param>
/// <param name="CapturedAt">When the session stopped (or the file was read).</param>
/// <param name="CaptureMs">Time to record the session, stop it and receive its events.</param>
/// <param name="AnalysisMs">Time to resolve the stacks, their lines, and group them.</param>
/// <param name="ThreadCount">Managed threads seen.</param>
/// <param name="PoolThreadCount">Of those, thread-pool workers.</param>
/// <param name="Groups">Threads with identical stacks, most first.</param>
public sealed record StackSnapshot(
    int ProcessId,
    DateTimeOffset CapturedAt,
    double CaptureMs,
    double AnalysisMs,
    int ThreadCount,
    int PoolThreadCount,
    IReadOnlyList<ThreadGroup> Groups)
{
    /// <summary>The modules in the stacks, and whether and why each is the app's code.</summary>
    public IReadOnlyList<ModuleVerdict> Modules { get; init; } = [];

    /// <summary>Where the requests of <see cref="ThreadGroup.Requests"/> come from; null when no thread was tied to a request.</summary>
    public RequestLabels? Requests { get; init; }

    /// <summary>
    /// Time spent, after the sampling, waiting for the request events that name the endpoints of sites whose frames the JIT
    /// inlined away (<see cref="StackSnapshots.CaptureWithRequests"/>); 0 when none was needed.
    /// </summary>
    public double RequestsMs { get; init; }

    /// <summary>
    /// How many times the sample profiler sampled every thread in the trace (every millisecond or so while it ran). The
    /// snapshot is one of them: the sample whose stacks the trace saw most, summed over its threads.
    /// </summary>
    public int Samples { get; init; }

    /// <summary>The time from the trace's first sample to its last, in milliseconds.</summary>
    public double SampledMs { get; init; }

    /// <summary>Where the snapshot was read from when it is not a live process, e.g. "Dump /tmp/core.1234 (process 1234)"; null for a live capture.</summary>
    public string? Source { get; init; }

    /// <summary>Events the runtime dropped from the session (<see cref="SessionLoss"/>); 0 for a complete snapshot.</summary>
    public int EventsLost { get; init; }

    /// <summary>What <see cref="EventsLost"/> means for this snapshot; null when nothing was lost.</summary>
    public string? Incomplete => SessionLoss.Warning(EventsLost);

    /// <summary>
    /// The pool workers parked in a call (idle workers left out), merged by the kind of call and the app's frames and lines
    /// (or, without them, the method the app's code was inlined into), most threads first. Threads parked on one line split
    /// over several exact stacks (tiered compilation renames frames, requests arrive by different paths, a cold app's first
    /// requests compile copies of one invoker); a site counts them together.
    /// </summary>
    public IReadOnlyList<BlockingSite> BlockedPoolSites =>
        Groups.Where(IsParkedPoolGroup)
            .GroupBy(g => (g.Blocking!.Kind, AppFrames: string.Join('\n', g.AppFrames), Invoker: SiteInvoker(g)))
            .Select(site => site.OrderByDescending(g => g.Threads).ToList())
            .Select(groups => new BlockingSite(groups.Sum(g => g.Threads), groups[0].Blocking!, groups[0].AppFrames, groups)
            {
                InlinedInto = InlinedInvoker.Merge(groups.Select(g => g.InlinedInto)),
                NamedFrom = groups[0].NamedFrom,
                Fix = groups[0].Fix,
                Awaits = groups[0].Awaits,
                RequestsSeen = Requests?.Describe(groups.SelectMany(g => g.Requests), actionShown: groups[0].AppFrames.Count > 0 && (groups[0].InlinedInto is null || groups[0].NamedFrom is not null)),
            })
            .OrderByDescending(site => site.Threads)
            .ThenBy(site => site.AppFrames.Count == 0)
            .ToList();

    /// <summary>Each of <see cref="BlockedPoolSites"/> in one line, as the CLI prints it: what a page shows, without saying it again in its own words.</summary>
    public IReadOnlyList<string> BlockedPoolSiteLines => [.. BlockedPoolSites.Select(site => site.Describe(PoolThreadCount))];

    /// <summary>Each of <see cref="Groups"/> in one line, in the same order, as the CLI prints it.</summary>
    public IReadOnlyList<string> GroupLines => [.. Groups.Select(group => group.Describe(PoolThreadCount))];

    /// <summary>The site with the most parked pool workers; null when none is parked.</summary>
    public BlockingSite? TopBlockedPoolSite() => BlockedPoolSites is [var top, ..] ? top : null;

    /// <summary>
    /// The pool-worker groups parked in a blocking call the app's code made, most threads first: the app's innermost frame
    /// called a synchronous method, or the app's code inlined into a compiled invoker did. A thread caught inside an
    /// awaited <c>…Async</c> call (a driver's lock or send of the moment) is the library's business for that instant, not the app blocking.
    /// </summary>
    public IEnumerable<ThreadGroup> PoolGroupsBlockedInApp() =>
        Groups.Where(g => IsParkedPoolGroup(g) && (g.AppFrame is not null || g.InlinedInto is not null) && !BlockingFrame.IsAwaitedCall(g.AppCall));

    // The invoker a site's code was inlined into, as far as it tells sites apart: its method, not the caller it was reached
    // from (MVC reaches one action's invoker from its executor and from its invoker). The copies of one invoker are one site
    // where the app's own labels say which request each thread serves, a site without app frames one per request; the
    // hosting events' labels (the last request a thread started) are not sure enough to merge copies on.
    private string? SiteInvoker(ThreadGroup group) =>
        group.InlinedInto?.Method is not { } invoker ? null
        : group.NamedFrom is not null ? FrameNames.WithoutCopyNumber(invoker)
        : Requests is not { Exact: true } ? invoker
        : group.AppFrames.Count > 0 ? FrameNames.WithoutCopyNumber(invoker)
        : $"{FrameNames.WithoutCopyNumber(invoker)}#{(group.Requests is [var top, ..] ? top.Request : null)}";

    private static bool IsParkedPoolGroup(ThreadGroup group) => group.PoolThreads && group.Blocking is { Kind: not BlockingKind.IdleWorker };
}

/// <summary>How a snapshot knows which request a thread runs.</summary>
/// <param name="Source">Where the labels come from, e.g. "the app's own request labels" or "ASP.NET Core's hosting events over 3.0 s".</param>
/// <param name="Verb">What a label means in a site's line: "serving" (the app knows) or "last request started on these threads:" (the hosting events).</param>
/// <param name="None">What to say of a site without an app frame whose threads have no label.</param>
/// <param name="ByThread">OS thread id to request, e.g. "GET /api/diagscenario/taskwait".</param>
/// <param name="Exact">
/// Whether a label is the request the thread serves now (the app's own), not only the last one it started (a thread that
/// ran a request's start and then a Task.Run delegate of another shows the first): inexact labels are shown only where no
/// app frame names the site.
/// </param>
public sealed record RequestLabels(string Source, string Verb, string None, IReadOnlyDictionary<int, string> ByThread, bool Exact)
{
    /// <summary>
    /// How many of each request started in the window, e.g. "GET /api/diagscenario/taskwait" → 240, where the labels come
    /// from the hosting events; null for the app's own labels. A thread's last request hides the ones before it (a ping
    /// started after a wave of the load): these do not.
    /// </summary>
    public IReadOnlyDictionary<string, int>? Started { get; init; }

    /// <summary>
    /// OS thread id to the endpoint the thread was running at the snapshot's moment, where it is known: the app's own labels,
    /// or ASP.NET Core's endpoint log around that moment. What names the code of a site whose frames the JIT inlined away.
    /// </summary>
    public IReadOnlyDictionary<int, EndpointLabel> Endpoints { get; init; } = new Dictionary<int, EndpointLabel>();

    /// <summary>
    /// The requests of a site's threads, most first, e.g. "serving GET /orders/{id} (12 threads)"; <see cref="None"/> when
    /// they have none and the site's frames do not reach the action that would name it otherwise (the JIT inlined it);
    /// null when they do and the labels are not <see cref="Exact"/>, or there are none.
    /// </summary>
    public string? Describe(IEnumerable<RequestCount> requests, bool actionShown)
    {
        if (actionShown && !Exact)
        {
            return null;
        }

        var merged = requests.GroupBy(r => r.Request, StringComparer.Ordinal)
            .Select(g => (Request: g.Key, Threads: g.Sum(r => r.Threads)))
            .OrderByDescending(r => r.Threads)
            .ThenBy(r => r.Request, StringComparer.Ordinal)
            .ToList();
        if (merged.Count == 0)
        {
            return actionShown ? null : None;
        }

        return $"{Verb} {string.Join(", ", merged.Take(3).Select(r => $"{r.Request} ({r.Threads} thread{(r.Threads == 1 ? "" : "s")})"))}";
    }
}

/// <summary>How many threads of a group run one request.</summary>
public sealed record RequestCount(string Request, int Threads);

/// <summary>Pool workers parked in the same kind of call from the same app frames, whatever the exact stacks above and below.</summary>
/// <param name="Threads">How many threads, over all its groups.</param>
/// <param name="Blocking">The call its largest group is parked in.</param>
/// <param name="AppFrames">The app's innermost run of frames with their lines, innermost first; empty when the stacks have none.</param>
/// <param name="Groups">The exact stacks, most threads first.</param>
public sealed record BlockingSite(int Threads, BlockingFrame Blocking, IReadOnlyList<AppFrame> AppFrames, IReadOnlyList<ThreadGroup> Groups)
{
    /// <summary>The method compiled at run time that the JIT inlined the app's code (all of it, or the callers of its frames) into, and its callers.</summary>
    public InlinedInvoker? InlinedInto { get; init; }

    /// <summary>The fix, in one line, with the scenario pair that shows it.</summary>
    public string? Fix { get; init; }

    /// <summary>How app frames the JIT inlined into <see cref="InlinedInto"/> were named back; null when none was (<see cref="ThreadGroup.NamedFrom"/>).</summary>
    public string? NamedFrom { get; init; }

    /// <summary>The requests its threads run, or that none could be tied to them; null when not known and not needed.</summary>
    public string? RequestsSeen { get; init; }

    /// <summary>The task its threads wait on and the async methods pending under it (a dump's); null when not known.</summary>
    public AwaitedTask? Awaits { get; init; }

    /// <summary>
    /// One line, e.g. "47 of 53 pool threads: blocked in Task.Result / Wait (sync-over-async) at StarvationScenariosController.cs:35
    /// `_ = database.QueryAsync(MockDelay(delayMs)).Result;` in StarvationScenariosController.TaskWait; serving GET /api/diagscenario/taskwait (47 threads) (3 stacks)".
    /// </summary>
    /// <param name="poolThreadCount">The snapshot's pool threads, to say "of how many".</param>
    public string Describe(int poolThreadCount)
    {
        var stacks = Groups.Count == 1 ? "1 stack" : $"{Groups.Count} stacks";
        var requests = RequestsSeen is null ? "" : $"; {RequestsSeen}";
        var awaits = Awaits is null ? "" : $"; {Awaits.Describe()}";
        return $"{Threads} of {poolThreadCount} pool thread{(poolThreadCount == 1 ? "" : "s")}: blocked in {Blocking.Name}{Where(AppFrames, InlinedInto, NamedFrom)}{awaits}{requests} ({stacks})";
    }

    /// <summary>Where the app made the call: " at File.cs:35 `text` in Type.Method ← Caller (File.cs:12)", or what became of its frames.</summary>
    internal static string Where(IReadOnlyList<AppFrame> appFrames, InlinedInvoker? inlinedInto, string? namedFrom = null)
    {
        if (appFrames.Count == 0)
        {
            return inlinedInto is null
                ? ", no app frame"
                : $", in the app's code the JIT inlined into {inlinedInto} (a method compiled at run time; a Release build's JIT inlines small methods, so no frame of the app's is left)";
        }

        var innermost = appFrames[0];
        var at = innermost.Inlined is { } inlinedCallee
            ? $"{At(inlinedCallee)}, which the JIT inlined into {innermost.Method}{(innermost.Source is { } call ? $" ({call.FileName}:{call.Line})" : "")}"
            : At(innermost);
        var callers = appFrames.Skip(1).Select(f => f.Source is { } s ? $"{f.Method} ({s.FileName}:{s.Line})" : f.Method);
        var inlined = namedFrom is not null ? $" ({namedFrom})"
            : inlinedInto is null ? ""
            : $" ← called by {inlinedInto}, compiled at run time, where the JIT may have inlined the action";
        return at + string.Concat(callers.Select(c => $" ← {c}")) + inlined;

        static string At(AppFrame frame) => frame.Source is { } source ? $" at {source} in {frame.Method}" : $" in {frame.Method} (no line: {frame.NoSource})";
    }
}

/// <summary>Threads that share one stack.</summary>
/// <param name="Threads">How many threads.</param>
/// <param name="PoolThreads">Whether they are thread-pool workers (their stacks end in the pool's dispatch loop).</param>
/// <param name="Blocking">The outermost call they are parked in, or null when they are not parked in a known one.</param>
/// <param name="AppFrames">The app's innermost run of frames with their lines, innermost first (e.g. <c>MockDatabase.Query</c>, then <c>StarvationScenariosController.SyncIo</c>).</param>
/// <param name="ThreadIds">The OS thread ids.</param>
/// <param name="Frames">The stack, leaf first, as TraceEvent names the frames.</param>
public sealed record ThreadGroup(
    int Threads,
    bool PoolThreads,
    BlockingFrame? Blocking,
    IReadOnlyList<AppFrame> AppFrames,
    IReadOnlyList<int> ThreadIds,
    IReadOnlyList<string> Frames)
{
    /// <summary>The method compiled at run time that the JIT inlined the app's code (all of it, or the callers of its frames) into, and its caller.</summary>
    public InlinedInvoker? InlinedInto { get; init; }

    /// <summary>Whether the app's frames run as a delegate handed to <c>Task.Run</c>: the blocking was moved to this thread, not removed.</summary>
    public bool UnderTaskRun { get; init; }

    /// <summary>
    /// How app frames the JIT inlined into <see cref="InlinedInto"/> were named back, e.g. "named from the endpoint ASP.NET
    /// Core logged on 7 of its 9 threads, …; the JIT inlined it into dynamicClass.lambda_method12"; null when none was.
    /// </summary>
    public string? NamedFrom { get; init; }

    /// <summary>The app's frames further out than <see cref="AppFrames"/>, past a framework frame between them, each with its line.</summary>
    public IReadOnlyList<AppFrame> OuterAppFrames { get; init; } = [];

    /// <summary>The requests its threads run, most first; empty when none is known.</summary>
    public IReadOnlyList<RequestCount> Requests { get; init; } = [];

    /// <summary>In how many of the snapshot's <see cref="StackSnapshot.Samples"/> its threads were in this stack, on average over its threads.</summary>
    public int SampledIn { get; init; }

    /// <summary>The task its threads wait on and the async methods pending under it, as most of them show it (a dump's); null when not known.</summary>
    public AwaitedTask? Awaits { get; init; }

    /// <summary>The app's innermost frame: the code that made the blocking call; null when the stack has none.</summary>
    public AppFrame? AppFrame => AppFrames.Count > 0 ? AppFrames[0] : null;

    /// <summary>The fix for the call it is parked in, in one line; null when it is not parked.</summary>
    public string? Fix => BlockingFrame.FixFor(Blocking, Frames, AppFrame, UnderTaskRun);

    /// <summary>
    /// The call the app's innermost frame made (<c>Type.Method</c>), e.g. <c>SqlCommand.ExecuteNonQuery</c> above a socket
    /// read: which API blocks. Null when the stack has no app frame or ends in it.
    /// </summary>
    public string? AppCall => BlockingFrame.CallMadeBy(Frames, AppFrame);

    /// <summary>One line, e.g. "118 of 125 pool threads: blocked in Task.Result / Wait (sync-over-async) (Task`1.get_Result) at StarvationScenariosController.cs:35 … in StarvationScenariosController.TaskWait".</summary>
    /// <param name="poolThreadCount">The snapshot's pool threads, to say "of how many".</param>
    public string Describe(int poolThreadCount)
    {
        var plural = Threads == 1 ? "" : "s";
        var who = PoolThreads ? $"{Threads} of {poolThreadCount} pool thread{(poolThreadCount == 1 ? "" : "s")}" : $"{Threads} other thread{plural}";
        var where = Blocking switch
        {
            null => "not parked in a known blocking call",
            { Kind: BlockingKind.IdleWorker } => "idle, waiting for work",
            _ => $"blocked in {Blocking}",
        };
        return $"{who}: {where}{BlockingSite.Where(AppFrames, InlinedInto, NamedFrom)}";
    }
}
