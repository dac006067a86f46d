namespace DiagnosticScenarios.Diagnosis;

/// <summary>
/// Every managed thread of a process at one moment, grouped by identical stack, most threads first
/// (what Visual Studio's Parallel Stacks shows), each group with the call it is parked in and the app's code that made it.
/// </summary>
/// <param name="ProcessId">The process sampled; 0 when read from a file.</param>
/// <param name="CapturedAt">When the session stopped (or the file was read).</param>
/// <param name="CaptureMs">Time to record the session, stop it and receive its events.</param>
/// <param name="AnalysisMs">Time to resolve the stacks and group them.</param>
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
    /// <summary>
    /// The pool workers parked in a call (idle workers left out), merged by the kind of call and the app's frames, most
    /// threads first. Threads parked on one line split over several exact stacks (tiered compilation renames frames,
    /// requests arrive by different paths); a site counts them together.
    /// </summary>
    public IReadOnlyList<BlockingSite> BlockedPoolSites =>
        Groups.Where(IsParkedPoolGroup)
            .GroupBy(g => (g.Blocking!.Kind, AppFrames: string.Join('\n', g.AppFrames)))
            .Select(site => site.OrderByDescending(g => g.Threads).ToList())
            .Select(groups => new BlockingSite(groups.Sum(g => g.Threads), groups[0].Blocking!, groups[0].AppFrames, groups))
            .OrderByDescending(site => site.Threads)
            .ThenBy(site => site.AppFrames.Count == 0)
            .ToList();

    /// <summary>The site with the most parked pool workers; null when none is parked.</summary>
    public BlockingSite? TopBlockedPoolSite() => BlockedPoolSites is [var top, ..] ? top : null;

    /// <summary>
    /// The pool-worker groups parked in a blocking call the app's code made, most threads first: the app's innermost frame
    /// called a synchronous method. A thread caught inside an awaited <c>…Async</c> call (a driver's lock or send of the
    /// moment) is the library's business for that instant, not the app blocking.
    /// </summary>
    public IEnumerable<ThreadGroup> PoolGroupsBlockedInApp() =>
        Groups.Where(g => IsParkedPoolGroup(g) && g.AppFrame is not null && !(g.AppCall is { } call && FrameNames.IsAsyncMethod(call)));

    private static bool IsParkedPoolGroup(ThreadGroup group) => group.PoolThreads && group.Blocking is { Kind: not BlockingKind.IdleWorker };
}

/// <summary>Pool workers parked in the same kind of call from the same app frames, whatever the exact stacks above and below.</summary>
/// <param name="Threads">How many threads, over all its groups.</param>
/// <param name="Blocking">The call its largest group is parked in.</param>
/// <param name="AppFrames">The app's innermost run of frames, innermost first; empty when the stacks have none.</param>
/// <param name="Groups">The exact stacks, most threads first.</param>
public sealed record BlockingSite(int Threads, BlockingFrame Blocking, IReadOnlyList<string> AppFrames, IReadOnlyList<ThreadGroup> Groups)
{
    /// <summary>One line, e.g. "47 of 53 pool threads: blocked in Task.Result / Wait (sync-over-async), app frame StarvationScenariosController.TaskWait (3 stacks)".</summary>
    /// <param name="poolThreadCount">The snapshot's pool threads, to say "of how many".</param>
    public string Describe(int poolThreadCount)
    {
        var app = AppFrames.Count == 0 ? "no app frame" : $"app frame {string.Join(" <- ", AppFrames)}";
        var stacks = Groups.Count == 1 ? "1 stack" : $"{Groups.Count} stacks";
        return $"{Threads} of {poolThreadCount} pool thread{(poolThreadCount == 1 ? "" : "s")}: blocked in {Blocking.Name}, {app} ({stacks})";
    }
}

/// <summary>Threads that share one stack.</summary>
/// <param name="Threads">How many threads.</param>
/// <param name="PoolThreads">Whether they are thread-pool workers (their stacks end in the pool's dispatch loop).</param>
/// <param name="Blocking">The outermost call they are parked in, or null when they are not parked in a known one.</param>
/// <param name="AppFrame">The app's innermost frame (<c>Type.Method</c>): the line that made the blocking call; null when the stack has none.</param>
/// <param name="AppFrames">The app's innermost run of frames, innermost first (e.g. <c>MockDatabase.Query</c>, then <c>StarvationScenariosController.SyncIo</c>).</param>
/// <param name="ThreadIds">The OS thread ids.</param>
/// <param name="Frames">The stack, leaf first, as TraceEvent names the frames.</param>
public sealed record ThreadGroup(
    int Threads,
    bool PoolThreads,
    BlockingFrame? Blocking,
    string? AppFrame,
    IReadOnlyList<string> AppFrames,
    IReadOnlyList<int> ThreadIds,
    IReadOnlyList<string> Frames)
{
    /// <summary>
    /// The call the app's innermost frame made (<c>Type.Method</c>), e.g. <c>SqlCommand.ExecuteNonQuery</c> above a socket
    /// read: which API blocks. Null when the stack has no app frame or ends in it.
    /// </summary>
    public string? AppCall
    {
        get
        {
            for (var i = 0; AppFrame is not null && i < Frames.Count; i++)
            {
                if (FrameNames.TypeAndMethod(Frames[i]) == AppFrame)
                {
                    return i > 0 ? FrameNames.TypeAndMethod(Frames[i - 1]) : null;
                }
            }

            return null;
        }
    }

    /// <summary>One line, e.g. "118 of 125 pool threads: blocked in Task.Result / Wait (sync-over-async) (Task`1.get_Result), app frame StarvationScenariosController.TaskWait".</summary>
    /// <param name="poolThreadCount">The snapshot's pool threads, to say "of how many".</param>
    public string Describe(int poolThreadCount)
    {
        var plural = Threads == 1 ? "" : "s";
        var who = PoolThreads ? $"{Threads} of {poolThreadCount} pool thread{(poolThreadCount == 1 ? "" : "s")}" : $"{Threads} other thread{plural}";
        var where = Blocking switch
        {
            null => "not parked in a known blocking call",
            { Kind: BlockingKind.IdleWorker } => "idle, waiting for work",
            _ => $"blocked in {Blocking.Name} at {Blocking.Frame}",
        };
        var app = AppFrames.Count == 0 ? "no app frame" : $"app frame {string.Join(" <- ", AppFrames)}";
        return $"{who}: {where}, {app}";
    }
}
