using System.Diagnostics;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.Diagnosis;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// Stack snapshots of a server under load, recorded while the load is on and analysed after it, and what they must show:
/// the scenario's action parked in its blocking call, or no app code parked at all.
/// </summary>
internal static class BlockedStacks
{
    private const int Shown = 6;

    /// <summary>Records a snapshot of <paramref name="processId"/> to <paramref name="trace"/> <paramref name="after"/> from now, off the pool; answers how long the recording took.</summary>
    public static async Task<TimeSpan> RecordAsync(int processId, TimeSpan after, string trace)
    {
        await Task.Delay(after);
        var recording = Stopwatch.StartNew();
        await StackSnapshots.RecordOnDedicatedThreadAsync(processId, trace);
        return recording.Elapsed;
    }

    /// <summary>Groups the recorded stacks: a second or more of a core, so only once the measured load is over.</summary>
    public static Task<StackSnapshot> AnalyzeAsync(string trace, TimeSpan recorded) =>
        Task.Run(() => StackSnapshots.Analyze(trace) with { CaptureMs = Math.Round(recorded.TotalMilliseconds, 1) });

    /// <summary>
    /// The blocking site with the most parked pool threads runs <paramref name="scenario"/>'s action and is parked in a
    /// <paramref name="blocking"/> call, or in one of <paramref name="alsoBlocking"/> when the action makes other kinds of blocking call.
    /// </summary>
    public static void AssertTopSiteNames(StackSnapshot snapshot, Scenario scenario, BlockingKind blocking, params BlockingKind[] alsoBlocking)
    {
        var top = snapshot.TopBlockedPoolSite();
        var groups = Describe(snapshot);
        Assert.True(top is not null, $"{scenario.Name}: no pool thread parked in a blocking call. {groups}");
        Assert.True(top.AppFrames.Any(f => IsFrameOf(f, scenario.Action)), $"{scenario.Name}: the top site's app frames do not name {scenario.Action}. {groups}");
        Assert.True(top.Blocking.Kind == blocking || alsoBlocking.Contains(top.Blocking.Kind),
            $"{scenario.Name}: the top site is parked in {top.Blocking.Kind}, not {string.Join(" or ", alsoBlocking.Prepend(blocking))}. {groups}");
    }

    /// <summary>Some site of parked pool threads runs <paramref name="scenario"/>'s action and is parked in a <paramref name="blocking"/> call.</summary>
    public static void AssertSomeSiteNames(StackSnapshot snapshot, Scenario scenario, BlockingKind blocking)
    {
        Assert.True(snapshot.BlockedPoolSites.Any(s => s.Blocking.Kind == blocking && s.AppFrames.Any(f => IsFrameOf(f, scenario.Action))),
            $"{scenario.Name}: no pool thread parked in {blocking} under {scenario.Action}. {Describe(snapshot)}");
    }

    /// <summary>No pool thread is parked in a blocking call the app's code made (see <see cref="StackSnapshot.PoolGroupsBlockedInApp"/>).</summary>
    public static void AssertNoPoolGroupBlockedInApp(StackSnapshot snapshot, Scenario scenario)
    {
        Assert.True(!snapshot.PoolGroupsBlockedInApp().Any(), $"{scenario.Name}: pool threads parked in the app's code. {Describe(snapshot)}");
    }

    /// <summary>The snapshot's blocking sites, then its largest groups, one a line: threads, blocking frame, app frames and the call the app made.</summary>
    public static string Describe(StackSnapshot snapshot) =>
        $"Snapshot of {snapshot.ThreadCount} threads ({snapshot.PoolThreadCount} pool), recorded in {snapshot.CaptureMs} ms, analysed in {snapshot.AnalysisMs} ms, blocking sites:\n"
        + string.Join('\n', snapshot.BlockedPoolSites.Take(Shown).Select(s => $"  {s.Describe(snapshot.PoolThreadCount)}"))
        + "\nlargest groups:\n"
        + string.Join('\n', snapshot.Groups.Take(Shown).Select(g => $"  {g.Describe(snapshot.PoolThreadCount)}{AppCall(g)}"));

    // The call the app made when it is not the blocking frame itself, e.g. SqlCommand.ExecuteNonQuery above a socket read.
    private static string AppCall(ThreadGroup group) =>
        group.AppCall is { } call && call != group.Blocking?.Frame ? $", calling {call}" : "";

    /// <summary>
    /// <paramref name="frame"/> (<c>Type.Method</c>) is the action <paramref name="action"/> (<c>Controller.Action</c>) or code the
    /// compiler made of its body: its async state machine (<c>Controller+&lt;Action&gt;d__5.MoveNext</c>) or a lambda in it
    /// (<c>Controller+&lt;&gt;c__DisplayClass6_0.&lt;Action&gt;b__0</c>), which is what a Task.Run delegate's thread shows.
    /// </summary>
    public static bool IsFrameOf(string frame, string action)
    {
        var dot = action.LastIndexOf('.');
        var (controller, method) = (action[..dot], action[(dot + 1)..]);
        return frame == action
            || (frame.StartsWith(controller + "+", StringComparison.Ordinal) && frame.Contains($"<{method}>", StringComparison.Ordinal));
    }
}
