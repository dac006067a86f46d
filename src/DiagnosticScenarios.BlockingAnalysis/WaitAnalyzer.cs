using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Wait analysis of the runtime's <c>WaitHandleWaitStart</c>/<c>Stop</c> events (.NET 9+), live or from a file such as
/// <c>dotnet-trace collect --clrevents waithandle --clreventlevel verbose</c> writes. Start and stop are paired per thread
/// (the stop carries no duration), and each start's stack gives the call site.
/// </summary>
public static class WaitAnalyzer
{
    // What dotnet-trace's --clrevents waithandle asks for, plus JIT and loader events so that methods compiled during
    // the session get names and IL maps too (rundown maps only the code still in use at the end: a wait begun in code
    // tiered up since would have no line), and the thread pool's own events, whose adjustments say why it added threads.
    private const ClrTraceEventParser.Keywords Keywords =
        ClrTraceEventParser.Keywords.WaitHandle | ClrTraceEventParser.Keywords.Jit | ClrTraceEventParser.Keywords.JittedMethodILToNativeMap
        | ClrTraceEventParser.Keywords.Loader | ClrTraceEventParser.Keywords.Threading;

    /// <summary>Records the waits of <paramref name="target"/> for <paramref name="duration"/> and analyses them. Synchronous; needs no pool thread.</summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static WaitAnalysis Capture(DiagnosticTarget target, TimeSpan duration, DiagnosisOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(target);
        options ??= DiagnosisOptions.Default;
        var trace = ScratchFiles.NewPath($"waits-{target.FileNamePart}", ".nettrace");
        try
        {
            Record(target, duration, trace, options);
            var analysis = Analyze(trace, options);
            target.Learn(analysis.ProcessId);
            return analysis with { ProcessId = target.ProcessId ?? analysis.ProcessId };
        }
        finally
        {
            File.Delete(trace);
        }
    }

    /// <summary>
    /// Records what <see cref="Analyze"/> reads to <paramref name="nettracePath"/>, and no more: the runtime's wait events with
    /// their stacks and ASP.NET Core's hosting events, which name the request a wait's thread serves when the JIT inlined the
    /// app's frames away. A caller that must disturb the target as little as possible analyses it later.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static void Record(DiagnosticTarget target, TimeSpan duration, string nettracePath, DiagnosisOptions? options = null, bool counters = false) =>
        Record(target, ended => ended.WaitOne(duration), nettracePath, options, counters);

    /// <summary>
    /// <see cref="Record(DiagnosticTarget, TimeSpan, string, DiagnosisOptions?, bool)"/> for as long as <paramref name="whileOn"/> runs on the
    /// calling thread, which it calls once the session is open: a caller that starts a load from it traces all of the load.
    /// </summary>
    /// <param name="counters">
    /// Also the runtime's <c>System.Runtime</c> meter once a second, whose seconds the starvation rule then reads
    /// (<see cref="WaitAnalysis.StarvedAtSecond"/>). The runtime serves one metrics session at a time: not while another
    /// tool reads them.
    /// </param>
    public static void Record(DiagnosticTarget target, Action whileOn, string nettracePath, DiagnosisOptions? options = null, bool counters = false) =>
        Record(target, _ => whileOn(), nettracePath, options, counters);

    private static void Record(DiagnosticTarget target, Action<WaitHandle> whileOn, string nettracePath, DiagnosisOptions? options, bool counters = false)
    {
        options ??= DiagnosisOptions.Default;
        EventPipeProvider[] providers = [new(ClrTraceEventParser.ProviderName, EventLevel.Verbose, (long)Keywords), .. RequestEvents.Providers];
        EventPipeRecorder.Record(target, counters ? [.. providers, RuntimeCounters.Provider(Guid.NewGuid().ToString())] : providers,
            whileOn, nettracePath, options, rundown: true);
    }

    /// <summary>Analyses the waits in a <c>.nettrace</c> file.</summary>
    /// <exception cref="DiagnosisException">The file cannot be read as a trace.</exception>
    public static WaitAnalysis Analyze(string nettracePath, DiagnosisOptions? options = null)
    {
        options ??= DiagnosisOptions.Default;
        using var log = TraceLogFiles.Open(nettracePath);
        using var resolver = new StackResolver(log.TraceLog, nettracePath, options);
        var open = new Dictionary<int, (double StartMs, DateTime At, ResolvedStack Stack, string? Request)>();
        var waits = new List<(int ThreadId, double Ms, bool Finished, DateTime At, ResolvedStack Stack, string? Request)>();
        var requests = new RequestEvents.Tally(endpointEventsKept: int.MaxValue);
        var starts = 0;
        var adjustments = new Dictionary<string, int>(StringComparer.Ordinal);

        var counters = new RuntimeCounters(sessionId: null);
        var source = log.TraceLog.Events.GetSource();
        var processId = 0;
        source.AllEvents += data => processId = data.ProcessID > 0 ? data.ProcessID : processId;
        source.Dynamic.All += requests.Add;
        source.Dynamic.All += counters.OnEvent;
        source.Clr.ThreadPoolWorkerThreadAdjustmentAdjustment += data =>
        {
            var reason = data.Reason.ToString();
            adjustments[reason] = adjustments.GetValueOrDefault(reason) + 1;
        };
        source.Clr.WaitHandleWaitStart += data =>
        {
            starts++;
            open[data.ThreadID] = (data.TimeStampRelativeMSec, data.TimeStamp.ToUniversalTime(), resolver.Resolve(resolver.Frames(data.CallStack())), requests.Last(data.ThreadID));
        };
        source.Clr.WaitHandleWaitStop += data =>
        {
            // A stop whose start came before the trace began has no stack to attribute: left out.
            if (open.Remove(data.ThreadID, out var start))
            {
                waits.Add((data.ThreadID, data.TimeStampRelativeMSec - start.StartMs, true, start.At, start.Stack, start.Request));
            }
        };
        source.Process();

        var endMs = log.TraceLog.SessionEndTimeRelativeMSec;
        waits.AddRange(open.Select(o => (o.Key, endMs - o.Value.StartMs, false, o.Value.At, o.Value.Stack, o.Value.Request)));

        // A wait whose app frames the JIT inlined into a compiled invoker is named from the endpoint its thread ran when it
        // began (the log's events after it included), or from the app's code; each stack and endpoint once.
        var named = new Dictionary<(string Stack, string? Endpoint), ResolvedStack>();
        waits = [.. waits.Select(w =>
        {
            if (w.Stack.InvokerIndex is null)
            {
                return w;
            }

            var endpoint = requests.EndpointAt(w.ThreadId, w.At);
            if (!named.TryGetValue((w.Stack.Key, endpoint), out var stack))
            {
                stack = resolver.NameInlined(w.Stack, endpoint is null ? [] : [new EndpointLabel(endpoint)], 1);
                named[(w.Stack.Key, endpoint)] = stack;
            }

            return w with { Stack = stack };
        })];

        var poolWaits = waits.Where(w => FrameNames.IsPoolWorker(w.Stack.Names)).ToList();

        // One site per call; a wait whose app frames the JIT inlined away is told apart by the request its thread serves.
        var sites = poolWaits
            .Select(w => (Wait: w, Blocking: BlockingFrame.Find(w.Stack.Names)))
            .GroupBy(w => SiteKey(w.Wait.Stack, w.Blocking, w.Wait.Request), StringComparer.Ordinal)
            .Select(g =>
            {
                var (first, blocking) = g.First();
                return new WaitSite(
                    first.Stack.AppFrames,
                    blocking,
                    g.Count(),
                    g.Count(w => !w.Wait.Finished),
                    Math.Round(g.Sum(w => w.Wait.Ms), 1),
                    Math.Round(g.Max(w => w.Wait.Ms), 1),
                    g.Select(w => w.Wait.ThreadId).Distinct().Count(),
                    first.Stack.Names)
                {
                    InlinedInto = InlinedInvoker.Merge(g.Select(w => w.Wait.Stack.InlinedInto)),
                    NamedFrom = first.Stack.NamedFrom,
                    OuterAppFrames = first.Stack.OuterAppFrames,
                    Fix = BlockingFrame.FixFor(blocking, first.Stack.Names, first.Stack.AppFrames.Count > 0 ? first.Stack.AppFrames[0] : null, first.Stack.UnderTaskRun),
                    Requests = g.Where(w => w.Wait.Request is not null)
                        .GroupBy(w => w.Wait.Request!, StringComparer.Ordinal)
                        .Select(r => new RequestCount(r.Key, r.Select(w => w.Wait.ThreadId).Distinct().Count()))
                        .OrderByDescending(r => r.Threads)
                        .ToList(),
                };
            })
            .OrderByDescending(s => s.TotalWaitMs)
            .ThenByDescending(s => s.Count)
            .ToList();

        return new WaitAnalysis(processId, Math.Round(endMs, 1), starts, poolWaits.Count, sites)
        {
            Modules = resolver.Modules,
            RequestsStarted = requests.Count,
            PoolAdjustments = adjustments,
            EventsLost = log.TraceLog.EventsLost,
            Seconds = counters.Seconds,
            StarvedAtSecond = FirstStarved(counters.Seconds, options.Rule),
        };
    }

    // How many seconds had been read when the rule first declared starvation over them; null when it never did.
    private static int? FirstStarved(IReadOnlyList<PoolSecond> seconds, StarvationRule rule)
    {
        for (var read = rule.WindowSeconds; read <= seconds.Count; read++)
        {
            if (rule.Evaluate([.. seconds.Take(read)]).Starved)
            {
                return read;
            }
        }

        return null;
    }

    // A call site is the app's lines and the kind of blocking call made there: the frame names of one call change as the
    // JIT re-compiles and inlines (Task`1.get_Result, then Task`1.GetResultCore). Without app frames (framework code alone,
    // or app code inlined away) it is the request the thread serves, or else the top frames.
    private static string SiteKey(ResolvedStack stack, BlockingFrame? blocking, string? request) =>
        string.Join('|', stack.AppFrames) + "#" + blocking?.Kind
        + (stack.AppFrames.Count > 0 ? "" : request is not null ? $"#{stack.InlinedInto?.Method}#{request}" : "#" + string.Join('|', stack.Names.Take(6)));
}
