using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;

namespace DotnetBlocking;

/// <summary>The plain-text answers: one line per group or site a presenter can read out, its fix, then its stack.</summary>
internal static class TextReport
{
    /// <param name="file">The trace read, or null for a live capture: a trace's sites say in how many of its samples they were seen.</param>
    public static void WriteStacks(TextWriter output, StackSnapshot snapshot, IReadOnlyList<BlockingSite> sites, IReadOnlyList<ThreadGroup> groups, string? file = null)
    {
        output.WriteLine(snapshot.Source is not null
            ? string.Create(CultureInfo.InvariantCulture,
                $"{snapshot.Source}: {snapshot.ThreadCount} managed threads, {snapshot.PoolThreadCount} of them pool threads, in {snapshot.Groups.Count} groups (analysed in {snapshot.AnalysisMs:0} ms).")
            : file is null
            ? string.Create(CultureInfo.InvariantCulture,
                $"Process {snapshot.ProcessId}: {snapshot.ThreadCount} managed threads, {snapshot.PoolThreadCount} of them pool threads, in {snapshot.Groups.Count} groups (captured in {snapshot.CaptureMs:0} ms, {(snapshot.RequestsMs > 0 ? $"endpoints read for {snapshot.RequestsMs:0} ms more, " : "")}analysed in {snapshot.AnalysisMs:0} ms).")
            : string.Create(CultureInfo.InvariantCulture,
                $"{file} (process {snapshot.ProcessId}): {snapshot.ThreadCount} managed threads, {snapshot.PoolThreadCount} of them pool threads, in {snapshot.Groups.Count} groups at the sample whose stacks the trace saw most, of {snapshot.Samples} samples over {snapshot.SampledMs / 1000:0.0} s (analysed in {snapshot.AnalysisMs:0} ms)."));
        WriteSnapshotFacts(output, snapshot);
        if (groups.Count == 0)
        {
            output.WriteLine("No thread-pool worker was seen; --all-threads shows the other threads.");
        }

        output.WriteLine();
        output.WriteLine(sites.Count == 0 ? "No pool thread is parked in a blocking call." : "Blocking sites (pool threads parked in the same call from the same app lines):");
        foreach (var site in sites)
        {
            output.WriteLine($"  {site.Describe(snapshot.PoolThreadCount)}");
            if (site.Fix is { } fix)
            {
                output.WriteLine($"    fix: {fix}");
            }

            if (file is not null && snapshot.Samples > 0)
            {
                output.WriteLine($"    seen in {site.Groups.Max(g => g.SampledIn)} of {snapshot.Samples} samples");
            }
        }

        foreach (var group in groups)
        {
            output.WriteLine();
            output.WriteLine(group.Describe(snapshot.PoolThreadCount));
            WriteFrames(output, group.Frames, [.. group.AppFrames, .. group.OuterAppFrames]);
        }
    }

    public static void WriteWaits(TextWriter output, WaitAnalysis analysis, IReadOnlyList<WaitSite> sites, string? file)
    {
        var source = file ?? $"Process {analysis.ProcessId}";
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{source}: {analysis.Waits} waits in {analysis.DurationMs / 1000:0.0} s, {analysis.PoolWaits} on pool threads, at {analysis.Sites.Count} call site{(analysis.Sites.Count == 1 ? "" : "s")}."));
        WriteAppModules(output, analysis.Modules);
        if (analysis.Incomplete is { } incomplete)
        {
            output.WriteLine(incomplete);
        }

        if (analysis.Waits == 0)
        {
            output.WriteLine("No WaitHandleWait event: the app is not on .NET 9+, the trace lacks --clrevents waithandle --clreventlevel verbose, or nothing waited (Thread.Sleep and blocking socket reads raise no such event).");
        }

        foreach (var site in sites)
        {
            output.WriteLine();
            output.WriteLine(site.Describe());
            if (site.Fix is { } fix)
            {
                output.WriteLine($"  fix: {fix}");
            }

            WriteFrames(output, site.Frames, [.. site.AppFrames, .. site.OuterAppFrames]);
        }
    }

    // What a reader needs to trust a snapshot's sites, from stacks and from watch alike: which modules were taken for the
    // app's, whether events were lost, where the requests on threads come from.
    private static void WriteSnapshotFacts(TextWriter output, StackSnapshot snapshot)
    {
        WriteAppModules(output, snapshot.Modules);
        if (snapshot.Incomplete is { } incomplete)
        {
            output.WriteLine(incomplete);
        }

        if (snapshot.Requests is { } requests)
        {
            output.WriteLine($"Requests on threads: {requests.Source}.");
        }
    }

    // Which modules the report took for the app's, and why: a reader who disagrees passes --app.
    private static void WriteAppModules(TextWriter output, IReadOnlyList<ModuleVerdict> modules)
    {
        var app = modules.Where(m => m.IsApp).Select(m => $"{m.Module} ({m.Rule})").ToList();
        var given = modules.Select(m => m.Rule).FirstOrDefault(rule => rule.StartsWith(ModuleVerdict.AppGivenRule, StringComparison.Ordinal));
        output.WriteLine((app.Count, given) switch
        {
            ( > 0, _) => $"App code: {string.Join(", ", app)}.",
            (_, not null) => $"App code: no module of these stacks is named by --app and no frame's namespace starts with it ({given}): check the name, or leave --app out and the modules' own rule decides.",
            _ => "App code: no frame of these stacks is in a module of the app's (its code may have been inlined into the framework's, or made none of these calls; if the rule missed its modules, --app names them).",
        });
    }

    // The app's frames carry their line, so the stack reads like an exception's.
    private static void WriteFrames(TextWriter output, IReadOnlyList<string> frames, IReadOnlyList<AppFrame> appFrames)
    {
        var next = 0;
        foreach (var frame in frames)
        {
            var line = next < appFrames.Count && FrameNames.TypeAndMethod(frame) == appFrames[next].Method
                ? appFrames[next++] is { Source: { } source } ? $" in {source.File}:{source.Line}" : ""
                : "";
            output.WriteLine($"    {frame}{line}");
        }
    }

    public static void WriteWatchStart(TextWriter output, string target, StarvationRule rule, TimeSpan timeout) =>
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Watching {target} for up to {timeout.TotalSeconds:0} s: its System.Runtime counters once a second; starvation is {rule.WindowSeconds} s in which the queue holds at least {rule.MinQueueLength} items on average and a queued item waits at least {rule.MinQueuedSecondsOfWork:0.##} s at the rate the pool completes work, with the CPU under {rule.MaxCpuPercent:0} %."));

    public static void WriteSecond(TextWriter output, PoolSecond second, StarvationVerdict verdict) =>
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  threads {second.ThreadCount,4}  queue {second.QueueLength,5}  completed {second.CompletedPerSecond,7:0}/s  CPU {second.CpuPercent,5:0.0} %  {(verdict.Starved ? "STARVED" : "")}"));

    public static void WriteWatch(TextWriter output, WatchResult result, IReadOnlyList<BlockingSite> sites, TimeSpan timeout)
    {
        if (!result.Starved || result.Snapshot is not { } snapshot)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"No starvation within the {timeout.TotalSeconds:0.#} s timeout ({result.Seconds.Count} seconds read); the last: {result.Verdict.Reason}."));
            return;
        }

        output.WriteLine();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Starvation after {result.Seconds.Count} seconds read: {result.Verdict.Reason}."));
        if (result.DumpFile is { } dump)
        {
            output.WriteLine($"Dump written at that moment: {dump} (dotnet-blocking stacks {dump} reads it).");
        }

        WriteSnapshotFacts(output, snapshot);
        output.WriteLine(sites.Count == 0 ? "No pool thread was parked in a blocking call at that moment." : "Blocking sites at that moment:");
        foreach (var site in sites)
        {
            output.WriteLine($"  {site.Describe(snapshot.PoolThreadCount)}");
            if (site.Fix is { } fix)
            {
                output.WriteLine($"    fix: {fix}");
            }
        }
    }
}
