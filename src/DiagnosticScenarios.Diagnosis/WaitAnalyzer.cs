using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace DiagnosticScenarios.Diagnosis;

/// <summary>
/// Wait analysis of the runtime's <c>WaitHandleWaitStart</c>/<c>Stop</c> events (.NET 9+), live or from a file such as
/// <c>dotnet-trace collect --clrevents waithandle --clreventlevel verbose</c> writes. Start and stop are paired per thread
/// (the stop carries no duration), and each start's stack gives the call site.
/// </summary>
public static class WaitAnalyzer
{
    // What dotnet-trace's --clrevents waithandle asks for, plus JIT and loader events so that methods compiled during
    // the session get names too (rundown names only those still loaded at the end).
    private const ClrTraceEventParser.Keywords Keywords =
        ClrTraceEventParser.Keywords.WaitHandle | ClrTraceEventParser.Keywords.Jit | ClrTraceEventParser.Keywords.Loader;

    /// <summary>Records the waits of <paramref name="processId"/> for <paramref name="duration"/> and analyses them. Synchronous; needs no pool thread.</summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static WaitAnalysis Capture(int processId, TimeSpan duration, DiagnosisOptions? options = null)
    {
        options ??= DiagnosisOptions.Default;
        var trace = Path.Combine(Path.GetTempPath(), $"waits-{processId}-{Guid.NewGuid():N}.nettrace");
        try
        {
            Record(processId, duration, trace, options);
            return Analyze(trace, options) with { ProcessId = processId };
        }
        finally
        {
            File.Delete(trace);
        }
    }

    /// <summary><see cref="Capture"/> on a thread of its own, for a caller that awaits.</summary>
    public static Task<WaitAnalysis> CaptureOnDedicatedThreadAsync(int processId, TimeSpan duration, DiagnosisOptions? options = null) =>
        EventPipeRecorder.OnDedicatedThread(() => Capture(processId, duration, options), "Wait analysis");

    /// <summary>
    /// Records what <see cref="Analyze"/> reads to <paramref name="nettracePath"/>, and no more: a caller that must disturb
    /// the target as little as possible records the waits now and analyses them later.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static void Record(int processId, TimeSpan duration, string nettracePath, DiagnosisOptions? options = null)
    {
        var provider = new EventPipeProvider(ClrTraceEventParser.ProviderName, EventLevel.Verbose, (long)Keywords);
        EventPipeRecorder.Record(processId, [provider], duration, nettracePath, options ?? DiagnosisOptions.Default);
    }

    /// <summary><see cref="Record"/> on a thread of its own, for a caller that awaits.</summary>
    public static Task RecordOnDedicatedThreadAsync(int processId, TimeSpan duration, string nettracePath, DiagnosisOptions? options = null) =>
        EventPipeRecorder.OnDedicatedThread(() => { Record(processId, duration, nettracePath, options); return nettracePath; }, "Wait recording");

    /// <summary>Analyses the waits in a <c>.nettrace</c> file.</summary>
    /// <exception cref="DiagnosisException">The file cannot be read as a trace.</exception>
    public static WaitAnalysis Analyze(string nettracePath, DiagnosisOptions? options = null)
    {
        options ??= DiagnosisOptions.Default;
        using var log = TraceLogFiles.Open(nettracePath);
        var open = new Dictionary<int, (double StartMs, IReadOnlyList<string> Frames)>();
        var waits = new List<(int ThreadId, double Ms, bool Finished, IReadOnlyList<string> Frames)>();
        var starts = 0;

        var source = log.TraceLog.Events.GetSource();
        source.Clr.WaitHandleWaitStart += data =>
        {
            starts++;
            open[data.ThreadID] = (data.TimeStampRelativeMSec, Frames(data));
        };
        source.Clr.WaitHandleWaitStop += data =>
        {
            // A stop whose start came before the trace began has no stack to attribute: left out.
            if (open.Remove(data.ThreadID, out var start))
            {
                waits.Add((data.ThreadID, data.TimeStampRelativeMSec - start.StartMs, true, start.Frames));
            }
        };
        source.Process();

        var endMs = log.TraceLog.SessionEndTimeRelativeMSec;
        waits.AddRange(open.Select(o => (o.Key, endMs - o.Value.StartMs, false, o.Value.Frames)));

        var poolWaits = waits.Where(w => FrameNames.IsPoolWorker(w.Frames)).ToList();
        var sites = poolWaits
            .Select(w => (Wait: w, AppFrames: FrameNames.AppFrames(w.Frames, options.AppNamespacePrefix), Blocking: BlockingFrame.Find(w.Frames)))
            .GroupBy(w => SiteKey(w.AppFrames, w.Blocking, w.Wait.Frames), StringComparer.Ordinal)
            .Select(g =>
            {
                var first = g.First();
                return new WaitSite(
                    first.AppFrames.Count > 0 ? first.AppFrames[0] : null,
                    first.AppFrames,
                    first.Blocking,
                    g.Count(),
                    g.Count(w => !w.Wait.Finished),
                    Math.Round(g.Sum(w => w.Wait.Ms), 1),
                    Math.Round(g.Max(w => w.Wait.Ms), 1),
                    g.Select(w => w.Wait.ThreadId).Distinct().Count(),
                    first.Wait.Frames);
            })
            .OrderByDescending(s => s.TotalWaitMs)
            .ThenByDescending(s => s.Count)
            .ToList();

        return new WaitAnalysis(0, Math.Round(endMs, 1), starts, poolWaits.Count, sites);
    }

    // A call site is the app line and the kind of blocking call it made: the frame names of one call change as the JIT
    // re-compiles and inlines (Task`1.get_Result, then Task`1.GetResultCore). A wait from framework code alone is told apart by its top frames.
    private static string SiteKey(IReadOnlyList<string> appFrames, BlockingFrame? blocking, IReadOnlyList<string> frames) =>
        string.Join('|', appFrames) + "#" + blocking?.Kind + (appFrames.Count == 0 ? "#" + string.Join('|', frames.Take(6)) : "");

    private static List<string> Frames(TraceEvent data)
    {
        var frames = new List<string>();
        for (var stack = data.CallStack(); stack is not null; stack = stack.Caller)
        {
            var method = stack.CodeAddress.FullMethodName;
            if (!string.IsNullOrEmpty(method))
            {
                frames.Add($"{stack.CodeAddress.ModuleName}!{method}");
            }
        }

        return frames;
    }
}
