using System.Globalization;
using DiagnosticScenarios.Diagnosis;

namespace DiagnosticScenarios.Diagnose;

/// <summary>The plain-text answers: one line per group or site a presenter can read out, then its stack.</summary>
internal static class TextReport
{
    public static void WriteStacks(TextWriter output, StackSnapshot snapshot, IReadOnlyList<BlockingSite> sites, IReadOnlyList<ThreadGroup> groups)
    {
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Process {snapshot.ProcessId}: {snapshot.ThreadCount} managed threads, {snapshot.PoolThreadCount} of them pool threads, in {snapshot.Groups.Count} groups (captured in {snapshot.CaptureMs:0} ms, analysed in {snapshot.AnalysisMs:0} ms)."));
        if (groups.Count == 0)
        {
            output.WriteLine("No thread-pool worker was seen; --all-threads shows the other threads.");
        }

        output.WriteLine();
        output.WriteLine(sites.Count == 0 ? "No pool thread is parked in a blocking call." : "Blocking sites (pool threads parked in the same call from the same app frames):");
        foreach (var site in sites)
        {
            output.WriteLine($"  {site.Describe(snapshot.PoolThreadCount)}");
        }

        foreach (var group in groups)
        {
            output.WriteLine();
            output.WriteLine(group.Describe(snapshot.PoolThreadCount));
            WriteFrames(output, group.Frames);
        }
    }

    public static void WriteWaits(TextWriter output, WaitAnalysis analysis, IReadOnlyList<WaitSite> sites, string? file)
    {
        var source = file ?? $"process {analysis.ProcessId}";
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{source}: {analysis.Waits} waits in {analysis.DurationMs / 1000:0.0} s, {analysis.PoolWaits} on pool threads, at {analysis.Sites.Count} call sites."));
        if (analysis.Waits == 0)
        {
            output.WriteLine("No WaitHandleWait event: the app is not on .NET 9+, the trace lacks --clrevents waithandle --clreventlevel verbose, or nothing waited (Thread.Sleep and blocking socket reads raise no such event).");
        }

        foreach (var site in sites)
        {
            output.WriteLine();
            output.WriteLine(site.Describe());
            WriteFrames(output, site.Frames);
        }
    }

    private static void WriteFrames(TextWriter output, IReadOnlyList<string> frames)
    {
        foreach (var frame in frames)
        {
            output.WriteLine($"    {frame}");
        }
    }
}
