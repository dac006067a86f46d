using System.Diagnostics;
using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing.Etlx;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Records a snapshot's trace of <paramref name="processId"/> to <paramref name="nettracePath"/>, calling
/// <paramref name="afterSampling"/> once the threads are sampled: <see cref="StackSnapshots.Record"/>, or a recording made
/// by another process for a caller that snapshots itself.
/// </summary>
public delegate void StackRecording(int processId, string nettracePath, DiagnosisOptions options, Action? afterSampling);

/// <summary>
/// Stack snapshots as dotnet-stack takes them (a few milliseconds of the sample profiler plus rundown, resolved by
/// TraceEvent), grouped and named down to the line. <see cref="Capture"/> is synchronous and needs no pool thread, so a
/// dedicated thread of a starved process can take one; its session's stream must be read by another process when the
/// target is the caller itself (see <see cref="EventPipeRecorder"/>), which <c>record</c> does.
/// </summary>
public static class StackSnapshots
{
    private const string SampleProfiler = "Microsoft-DotNETCore-SampleProfiler";

    /// <summary>
    /// Samples every managed thread of <paramref name="processId"/> and groups the stacks; <paramref name="record"/> records
    /// the trace (<see cref="Record"/> when null). Call it from a thread that is not a pool thread when the target is this process.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static StackSnapshot Capture(int processId, DiagnosisOptions? options = null, StackRecording? record = null)
    {
        options ??= DiagnosisOptions.Default;
        var trace = ScratchFiles.NewPath($"stacks-{processId}", ".nettrace");
        try
        {
            var recording = Stopwatch.StartNew();
            IReadOnlyDictionary<int, string>? labels = null;
            // Read as the samples are taken, not once the session has stopped: its rundown can take seconds on a starved
            // machine (ten, once, beside four other sessions), and by then the threads serve other requests.
            (record ?? Record)(processId, trace, options, () => labels = options.ThreadLabels?.Invoke());
            var captureMs = recording.Elapsed.TotalMilliseconds;
            var requests = labels is null
                ? null
                : new RequestLabels("the app's own request labels", "serving", "not serving a request the app labelled", labels, Exact: true);
            return Analyze(trace, options, requests) with { ProcessId = processId, CaptureMs = Math.Round(captureMs, 1) };
        }
        finally
        {
            File.Delete(trace);
        }
    }

    /// <summary>
    /// <see cref="Capture"/> of another process, with the last request each thread started (<see cref="HostingRequests"/>)
    /// over <paramref name="window"/> before it: what names a route whose frames the JIT inlined away.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static StackSnapshot CaptureWithRequests(int processId, TimeSpan window, DiagnosisOptions? options = null)
    {
        options ??= DiagnosisOptions.Default;
        var trace = ScratchFiles.NewPath($"stacks-{processId}", ".nettrace");
        try
        {
            var captureMs = 0.0;
            var requests = HostingRequests.Record(processId, window, () =>
            {
                var recording = Stopwatch.StartNew();
                Record(processId, trace, options);
                captureMs = recording.Elapsed.TotalMilliseconds;
            }, options);
            return Analyze(trace, options, requests) with { ProcessId = processId, CaptureMs = Math.Round(captureMs, 1) };
        }
        finally
        {
            File.Delete(trace);
        }
    }

    /// <summary>
    /// Records what <see cref="Analyze"/> reads (the sample profiler and rundown) to <paramref name="nettracePath"/>, and no
    /// more: a caller that must disturb the target as little as possible takes the snapshot now and analyses it later.
    /// <paramref name="afterSampling"/>, if given, runs once the threads are sampled, before the session stops and its rundown.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static void Record(int processId, string nettracePath, DiagnosisOptions? options = null, Action? afterSampling = null)
    {
        options ??= DiagnosisOptions.Default;
        EventPipeRecorder.Record(processId, [new EventPipeProvider(SampleProfiler, EventLevel.Informational)], ended =>
        {
            if (!ended.WaitOne(options.SampleDuration))
            {
                afterSampling?.Invoke();
            }
        }, nettracePath, options, rundown: true);
    }

    /// <summary><see cref="Record"/> on a thread of its own, for a caller that awaits.</summary>
    public static Task RecordOnDedicatedThreadAsync(int processId, string nettracePath, DiagnosisOptions? options = null) =>
        EventPipeRecorder.OnDedicatedThread(() => { Record(processId, nettracePath, options); return nettracePath; }, "Stack recording");

    /// <summary>
    /// Groups the stacks of a <c>.nettrace</c> recorded with the sample profiler and rundown (e.g. by dotnet-trace), with
    /// the file and line of each app frame, and the request each thread runs when <paramref name="requests"/> says.
    /// </summary>
    /// <exception cref="DiagnosisException">The file cannot be read as a trace.</exception>
    public static StackSnapshot Analyze(string nettracePath, DiagnosisOptions? options = null, RequestLabels? requests = null)
    {
        options ??= DiagnosisOptions.Default;
        var analysis = Stopwatch.StartNew();
        var threads = new Dictionary<int, ResolvedStack>();
        IReadOnlyList<ModuleVerdict> modules;
        int eventsLost;
        using (var log = TraceLogFiles.Open(nettracePath))
        using (var resolver = new StackResolver(log.TraceLog, nettracePath, options))
        {
            // The snapshot is one instant of the window: the tick of the sample profiler (every thread sampled at once) whose
            // stacks the window saw most, summed over its threads. A parked thread has the same stack in every tick; a thread
            // caught for a moment in a lock's slow path or a short wait, as a single sample (dotnet-stack's) can catch it,
            // is there in few ticks, so an instant where it was is not chosen. One instant, not each thread's own most
            // frequent stack: two threads taking turns at a lock, each sleeping inside it half the time, were both shown
            // inside it at once (a CI snapshot of the lock pair), a moment that never was.
            var ticks = new List<Dictionary<int, CallStackIndex>>();
            var stacks = new Dictionary<CallStackIndex, TraceCallStack?>();
            var source = log.TraceLog.Events.GetSource();
            source.AllEvents += data =>
            {
                if (data.ProviderName == SampleProfiler)
                {
                    // A tick samples each thread once, one after the other: a thread seen again starts the next tick.
                    if (ticks.Count == 0 || ticks[^1].ContainsKey(data.ThreadID))
                    {
                        ticks.Add(new Dictionary<int, CallStackIndex>());
                    }

                    var index = data.CallStackIndex();
                    ticks[^1][data.ThreadID] = index;
                    stacks.TryAdd(index, data.CallStack());
                }
            };
            source.Process();
            foreach (var (thread, index) in Instant(ticks))
            {
                threads[thread] = resolver.Resolve(resolver.Frames(stacks[index]));
            }

            modules = resolver.Modules;
            eventsLost = log.TraceLog.EventsLost;
        }

        var groups = threads
            .GroupBy(t => t.Value.Key, StringComparer.Ordinal)
            .Select(g => Group(g.Select(t => t.Key).Order().ToList(), g.First().Value, requests))
            .OrderByDescending(g => g.Threads)
            .ThenByDescending(g => g.PoolThreads)
            .ThenBy(g => g.AppFrame is null)
            .ToList();

        return new StackSnapshot(
            ProcessId: 0,
            CapturedAt: DateTimeOffset.UtcNow,
            CaptureMs: 0,
            AnalysisMs: Math.Round(analysis.Elapsed.TotalMilliseconds, 1),
            ThreadCount: threads.Count,
            PoolThreadCount: groups.Where(g => g.PoolThreads).Sum(g => g.Threads),
            Groups: groups)
        {
            Modules = modules,
            Requests = requests,
            EventsLost = eventsLost,
        };
    }

    /// <summary>
    /// Each thread's stack at the snapshot's instant: the tick whose stacks the window saw most, summed over its threads
    /// (the first such tick); a thread that tick did not sample (it started or ended within the window) at its most
    /// frequent stack.
    /// </summary>
    internal static Dictionary<int, TStack> Instant<TStack>(IReadOnlyList<IReadOnlyDictionary<int, TStack>> ticks)
        where TStack : notnull
    {
        var seen = ticks.SelectMany(tick => tick).CountBy(sample => sample).ToDictionary(c => c.Key, c => c.Value);
        var instant = ticks.Count == 0 ? [] : new Dictionary<int, TStack>(ticks.MaxBy(tick => tick.Sum(sample => seen[sample]))!);
        foreach (var (sample, _) in seen.OrderByDescending(c => c.Value))
        {
            instant.TryAdd(sample.Key, sample.Value);
        }

        return instant;
    }

    private static ThreadGroup Group(List<int> threadIds, ResolvedStack stack, RequestLabels? requests) =>
        new(threadIds.Count, FrameNames.IsPoolWorker(stack.Names), BlockingFrame.Find(stack.Names), stack.AppFrames, threadIds, stack.Names)
        {
            InlinedInto = stack.InlinedInto,
            UnderTaskRun = stack.UnderTaskRun,
            OuterAppFrames = stack.OuterAppFrames,
            Requests = requests is null
                ? []
                : threadIds.Select(id => requests.ByThread.GetValueOrDefault(id))
                    .OfType<string>()
                    .GroupBy(r => r, StringComparer.Ordinal)
                    .Select(r => new RequestCount(r.Key, r.Count()))
                    .OrderByDescending(r => r.Threads)
                    .ToList(),
        };
}
