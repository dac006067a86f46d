using System.Globalization;
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
    /// Samples every managed thread of <paramref name="target"/> and groups the stacks; <paramref name="record"/> records
    /// the trace (<see cref="Record"/> when null). Call it from a thread that is not a pool thread when the target is this process.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static StackSnapshot Capture(DiagnosticTarget target, DiagnosisOptions? options = null, StackRecording? record = null)
    {
        ArgumentNullException.ThrowIfNull(target);
        options ??= DiagnosisOptions.Default;
        var trace = ScratchFiles.NewPath($"stacks-{target.FileNamePart}", ".nettrace");
        try
        {
            var recording = Stopwatch.StartNew();
            IReadOnlyDictionary<int, ThreadLabel>? labels = null;
            // Read as the samples are taken, not once the session has stopped: its rundown can take seconds on a starved
            // machine (ten, once, beside four other sessions), and by then the threads serve other requests.
            Action afterSampling = () => labels = options.ThreadLabels?.Invoke();
            if (record is null)
            {
                Record(target, trace, options, afterSampling);
            }
            else
            {
                record(target.ProcessId!.Value, trace, options, afterSampling);
            }

            var captureMs = recording.Elapsed.TotalMilliseconds;
            var requests = labels is null
                ? null
                : new RequestLabels("the app's own request labels", "serving", "not serving a request the app labelled", labels.ToDictionary(l => l.Key, l => l.Value.Request), Exact: true)
                {
                    Endpoints = labels.Where(l => l.Value.Endpoint is not null).ToDictionary(l => l.Key, l => l.Value.Endpoint!),
                };
            return Taken(Analyze(trace, options, requests), target, captureMs);
        }
        finally
        {
            File.Delete(trace);
        }
    }

    /// <summary>
    /// <see cref="Capture"/> of another process while its requests are read (<see cref="RequestEvents"/>): the endpoint each
    /// thread ran at the snapshot's moment names the code of a site whose frames a Release build's JIT inlined away. The
    /// events are read from just before the snapshot until every such site has a thread whose endpoint they name, or
    /// <paramref name="patience"/> has passed; a process with no such site is not kept waiting.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static StackSnapshot CaptureWithRequests(DiagnosticTarget target, TimeSpan patience, DiagnosisOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(target);
        options ??= DiagnosisOptions.Default;
        var trace = ScratchFiles.NewPath($"stacks-{target.FileNamePart}", ".nettrace");
        using var requests = new RequestListener();
        var reading = Stopwatch.StartNew();
        StackSnapshot? snapshot = null;
        var captureMs = 0.0;
        try
        {
            EventPipeRecorder.Listen(target, RequestEvents.Providers, requests.OnEvent, ended =>
            {
                requests.WaitForEndpoint(patience / 2, ended);
                var recording = Stopwatch.StartNew();
                Record(target, trace, options);
                captureMs = recording.Elapsed.TotalMilliseconds;
                snapshot = Analyze(trace, options, (unnamed, instant) => requests.LabelsOnceNamed(unnamed, instant, patience - reading.Elapsed, ended));
            }, options);
            return Taken(snapshot!, target, captureMs);
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
    public static void Record(DiagnosticTarget target, string nettracePath, DiagnosisOptions? options = null, Action? afterSampling = null)
    {
        options ??= DiagnosisOptions.Default;
        EventPipeRecorder.Record(target, [new EventPipeProvider(SampleProfiler, EventLevel.Informational)], ended =>
        {
            if (!ended.WaitOne(options.SampleDuration))
            {
                afterSampling?.Invoke();
            }
        }, nettracePath, options, rundown: true);
    }

    // A live snapshot's process and time to record; a target reached through a port learns its id from the trace.
    private static StackSnapshot Taken(StackSnapshot snapshot, DiagnosticTarget target, double captureMs)
    {
        target.Learn(snapshot.ProcessId);
        return snapshot with { ProcessId = target.ProcessId ?? snapshot.ProcessId, CaptureMs = Math.Round(captureMs, 1) };
    }

    /// <summary><see cref="Record"/> on a thread of its own, for a caller that awaits.</summary>
    public static Task RecordOnDedicatedThreadAsync(int processId, string nettracePath, DiagnosisOptions? options = null) =>
        EventPipeRecorder.OnDedicatedThread(() => { Record(processId, nettracePath, options); return nettracePath; }, "Stack recording");

    /// <summary>
    /// Groups the stacks of a <c>.nettrace</c> recorded with the sample profiler and rundown (e.g. by dotnet-trace), with
    /// the file and line of each app frame, and the request each thread runs when <paramref name="requests"/> says.
    /// </summary>
    /// <exception cref="DiagnosisException">The file cannot be read as a trace.</exception>
    public static StackSnapshot Analyze(string nettracePath, DiagnosisOptions? options = null, RequestLabels? requests = null) =>
        Analyze(nettracePath, options ?? DiagnosisOptions.Default, (_, _) => requests);

    /// <summary>The snapshot a file holds: a trace's (<see cref="Read"/>), or else a core dump's (<see cref="DumpSnapshots.Analyze"/>).</summary>
    /// <exception cref="DiagnosisException">The file is neither a readable trace with stacks nor a readable dump of a .NET process.</exception>
    public static StackSnapshot FromFile(string path, DiagnosisOptions options) =>
        TraceLogFiles.IsNettrace(path) ? Read(path, options) : DumpSnapshots.Analyze(path, options);

    /// <summary>
    /// <see cref="Analyze(string, DiagnosisOptions?, RequestLabels?)"/> of a trace another tool recorded (dotnet-trace
    /// collect's default profile), refusing one that holds no sample of the threads' stacks.
    /// </summary>
    /// <exception cref="DiagnosisException">The file cannot be read as a trace, or has no sample profiler event.</exception>
    public static StackSnapshot Read(string nettracePath, DiagnosisOptions? options = null)
    {
        var snapshot = Analyze(nettracePath, options);
        return snapshot.Samples > 0 ? snapshot : throw new DiagnosisException(DiagnosisFailure.UnreadableTrace,
            $"{nettracePath} holds no sample of the threads' stacks: record it with dotnet-trace collect's default profile, or add the Microsoft-DotNETCore-SampleProfiler provider.");
    }

    /// <summary>
    /// <see cref="Analyze(string, DiagnosisOptions?, RequestLabels?)"/> with the labels asked for once the stacks are read:
    /// <paramref name="labelsAt"/> gets the threads of each group whose app code the JIT inlined into a compiled invoker, and
    /// the snapshot's moment (UTC), and may wait for the events that name them.
    /// </summary>
    public static StackSnapshot Analyze(string nettracePath, DiagnosisOptions options, Func<IReadOnlyList<IReadOnlyList<int>>, DateTime, RequestLabels?> labelsAt)
    {
        var analysis = Stopwatch.StartNew();
        List<ThreadGroup> groups;
        int threadCount;
        IReadOnlyList<ModuleVerdict> modules;
        RequestLabels? requests;
        var requestsMs = 0.0;
        int eventsLost;
        var processId = 0;
        var samples = 0;
        var sampledMs = 0.0;
        using (var log = TraceLogFiles.Open(nettracePath))
        using (var resolver = new StackResolver(log.TraceLog, nettracePath, options))
        {
            // The snapshot is one instant of the window: the tick of the sample profiler (every thread sampled at once) whose
            // stacks the window saw most, summed over its threads. A parked thread has the same stack in every tick; a thread
            // caught for a moment in a lock's slow path or a short wait, as a single sample (dotnet-stack's) can catch it,
            // is there in few ticks, so an instant where it was is not chosen. One instant, not each thread's own most frequent
            // stack: two threads taking turns at a lock, each sleeping inside it half the time, would both be shown inside it at
            // once, a moment that never was.
            var ticks = new List<Dictionary<int, CallStackIndex>>();
            var tickTimes = new List<DateTime>();
            var stacks = new Dictionary<CallStackIndex, TraceCallStack?>();
            var source = log.TraceLog.Events.GetSource();
            source.AllEvents += data =>
            {
                if (data.ProviderName == SampleProfiler)
                {
                    processId = data.ProcessID;
                    // A tick samples each thread once, one after the other: a thread seen again starts the next tick.
                    if (ticks.Count == 0 || ticks[^1].ContainsKey(data.ThreadID))
                    {
                        ticks.Add(new Dictionary<int, CallStackIndex>());
                        tickTimes.Add(data.TimeStamp.ToUniversalTime());
                    }

                    var index = data.CallStackIndex();
                    ticks[^1][data.ThreadID] = index;
                    stacks.TryAdd(index, data.CallStack());
                }
            };
            source.Process();
            var threads = new Dictionary<int, ResolvedStack>();
            var atInstant = Instant(ticks, out var chosen);
            foreach (var (thread, index) in atInstant)
            {
                threads[thread] = resolver.Resolve(resolver.Frames(stacks[index]));
            }

            samples = ticks.Count;
            sampledMs = ticks.Count == 0 ? 0 : (tickTimes[^1] - tickTimes[0]).TotalMilliseconds;

            // How many of the window's samples found a group's threads in its stack, on average over its threads.
            int SampledIn(IEnumerable<int> ids) =>
                (int)Math.Round(ids.Average(id => ticks.Count(tick => tick.TryGetValue(id, out var index) && index == atInstant[id])));
            var instant = chosen < 0 ? DateTime.UtcNow : tickTimes[chosen];
            var reading = Stopwatch.StartNew();
            requests = labelsAt([.. ByInvoker(threads).Values], instant);
            requestsMs = reading.Elapsed.TotalMilliseconds;
            groups = [.. GroupStacks(threads, resolver, requests).Select(g => g with { SampledIn = SampledIn(g.ThreadIds) })];
            threadCount = threads.Count;
            modules = resolver.Modules;
            eventsLost = log.TraceLog.EventsLost;
        }

        return new StackSnapshot(
            ProcessId: processId,
            CapturedAt: DateTimeOffset.UtcNow,
            CaptureMs: 0,
            AnalysisMs: Math.Round(analysis.Elapsed.TotalMilliseconds - requestsMs, 1),
            ThreadCount: threadCount,
            PoolThreadCount: groups.Where(g => g.PoolThreads).Sum(g => g.Threads),
            Groups: groups)
        {
            Modules = modules,
            Requests = requests,
            EventsLost = eventsLost,
            RequestsMs = Math.Round(requestsMs, 1),
            Samples = samples,
            SampledMs = Math.Round(sampledMs, 1),
        };
    }

    /// <summary>
    /// Each thread's stack at the snapshot's instant: the tick whose stacks the window saw most, summed over its threads
    /// (the first such tick); a thread that tick did not sample (it started or ended within the window) at its most
    /// frequent stack.
    /// </summary>
    internal static Dictionary<int, TStack> Instant<TStack>(IReadOnlyList<IReadOnlyDictionary<int, TStack>> ticks)
        where TStack : notnull => Instant(ticks, out _);

    /// <inheritdoc cref="Instant{TStack}(IReadOnlyList{IReadOnlyDictionary{int, TStack}})"/>
    /// <param name="chosen">The index of the tick chosen; -1 when there is none.</param>
    internal static Dictionary<int, TStack> Instant<TStack>(IReadOnlyList<IReadOnlyDictionary<int, TStack>> ticks, out int chosen)
        where TStack : notnull
    {
        var seen = ticks.SelectMany(tick => tick).CountBy(sample => sample).ToDictionary(c => c.Key, c => c.Value);
        chosen = ticks.Count == 0 ? -1 : ticks.Select((tick, i) => (Seen: tick.Sum(sample => seen[sample]), i)).MaxBy(t => t.Seen).i;
        var instant = chosen < 0 ? [] : new Dictionary<int, TStack>(ticks[chosen]);
        foreach (var (sample, _) in seen.OrderByDescending(c => c.Value))
        {
            instant.TryAdd(sample.Key, sample.Value);
        }

        return instant;
    }

    /// <summary>
    /// The threads of each identical stack as one group, the app's code the JIT inlined away named back from the threads'
    /// labels, most threads first: every source's stacks are grouped here.
    /// </summary>
    /// <param name="awaitedBy">The async method each thread's awaited task runs (<c>InvoiceSender.SendAsync</c>), where a dump shows it.</param>
    internal static List<ThreadGroup> GroupStacks(IReadOnlyDictionary<int, ResolvedStack> threads, StackResolver resolver, RequestLabels? requests,
        IReadOnlyDictionary<int, string>? awaitedBy = null)
    {
        var byInvoker = ByInvoker(threads);
        var stacks = threads.GroupBy(t => t.Value.Key, StringComparer.Ordinal)
            .Select(g =>
            {
                var ids = g.Select(t => t.Key).Order().ToList();
                var stack = g.First().Value;
                var labelled = stack.InvokerIndex is null ? ids : byInvoker[InvokerKey(stack)];
                var labels = requests is null ? [] : labelled.Select(id => requests.Endpoints.GetValueOrDefault(id)).OfType<EndpointLabel>().ToList();
                var awaited = awaitedBy is null ? null : ids.Select(id => awaitedBy.GetValueOrDefault(id)).OfType<string>()
                    .GroupBy(m => m, StringComparer.Ordinal).MaxBy(m => m.Count())?.Key;
                return (Ids: ids, Stack: stack, Labels: labels, Labelled: labelled.Count, Awaited: awaited, Named: resolver.NameInlined(stack, labels, labelled.Count, awaited));
            })
            .ToList();

        // One call site of one compiled invoker leaves one frame above it: where another stack of the same invoker was named
        // at a call alone, in another frame, a stack that several calls fit is not named at that one.
        return [.. stacks.Select(s =>
            {
                if (s.Named.Named is not { Fits: > 1 } ambiguous)
                {
                    return Group(s.Ids, s.Named, requests);
                }

                var taken = stacks.Where(o => o.Named.Named is { Fits: 1 } sure && sure.Callee != ambiguous.Callee && InvokerKey(o.Stack) == InvokerKey(s.Stack))
                    .Select(o => o.Named.Named!)
                    .ToList();
                return Group(s.Ids, taken.Count == 0 ? s.Named : resolver.NameInlined(s.Stack, s.Labels, s.Labelled, s.Awaited, taken), requests);
            })
            .OrderByDescending(g => g.Threads)
            .ThenByDescending(g => g.PoolThreads)
            .ThenBy(g => g.AppFrame is null)];
    }

    // Threads parked under one method compiled at run time run one endpoint: ASP.NET Core compiles an invoker per action
    // or handler, so a thread labelled in any of its stacks names them all. Any other stack is its own, and so is one
    // whose invoker is not told apart by its number (a dump names every such method lambda_method).
    internal static Dictionary<string, IReadOnlyList<int>> ByInvoker(IReadOnlyDictionary<int, ResolvedStack> threads) =>
        threads.Where(t => t.Value.InvokerIndex is not null)
            .GroupBy(t => InvokerKey(t.Value), StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => (IReadOnlyList<int>)[.. g.Select(t => t.Key).Order()], StringComparer.Ordinal);

    private static string InvokerKey(ResolvedStack stack) =>
        stack.InvokerIndex is { } at && stack.Frames[at].IsDynamic && FrameNames.IsNumberedCompiledMethod(stack.Frames[at].Name) ? stack.Frames[at].Name : stack.Key;

    private static ThreadGroup Group(List<int> threadIds, ResolvedStack stack, RequestLabels? requests) =>
        new(threadIds.Count, FrameNames.IsPoolWorker(stack.Names), BlockingFrame.Find(stack.Names), stack.AppFrames, threadIds, stack.Names)
        {
            InlinedInto = stack.InlinedInto,
            NamedFrom = stack.NamedFrom,
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

/// <summary>What the app says one of its threads is serving: the request and, where it knows it, the endpoint and its method.</summary>
/// <param name="Request">E.g. "GET /api/diagscenario/taskwait".</param>
public sealed record ThreadLabel(string Request, EndpointLabel? Endpoint = null);

/// <summary>
/// The request events of a live session as they arrive, and the labels of a snapshot's moment once they name a thread of
/// each group that needs one.
/// </summary>
/// <param name="when">When the requests were read, as the labels' source says it (e.g. "while watching"); null: for how long.</param>
internal sealed class RequestListener(string? when = null) : IDisposable
{
    private static readonly TimeSpan Poll = TimeSpan.FromMilliseconds(20);

    // No request event for this long: the process serves no request now (its threads are held, not cycling), and none
    // that would name a thread is coming soon; a starved server under load raises several a second.
    private static readonly TimeSpan Quiet = TimeSpan.FromMilliseconds(400);

    private readonly RequestEvents.Tally _tally = new();
    private readonly Lock _lock = new();
    private readonly Stopwatch _listening = Stopwatch.StartNew();
    private readonly ManualResetEventSlim _endpointStarted = new();
    private TimeSpan _lastEvent;

    public void OnEvent(Microsoft.Diagnostics.Tracing.TraceEvent data)
    {
        lock (_lock)
        {
            _tally.Add(data);
            _lastEvent = _listening.Elapsed;
        }

        if (RequestEvents.EndpointLogged(data) is (_, true))
        {
            _endpointStarted.Set();
        }
    }

    /// <summary>
    /// Waits, at most <paramref name="lead"/>, until an endpoint starts: a snapshot taken after it finds that request's
    /// thread still running it, labelled, where one taken at once would find only threads whose requests began unseen.
    /// </summary>
    public void WaitForEndpoint(TimeSpan lead, WaitHandle ended) => WaitHandle.WaitAny([_endpointStarted.WaitHandle, ended], lead);

    public void Dispose() => _endpointStarted.Dispose();

    /// <summary>
    /// The labels at <paramref name="instant"/>, once each group has a thread whose endpoint the events name, the patience
    /// has run out, the events have gone quiet, or the session has ended.
    /// </summary>
    public RequestLabels LabelsOnceNamed(IReadOnlyList<IReadOnlyList<int>> groups, DateTime instant, TimeSpan patience, WaitHandle ended)
    {
        var waiting = Stopwatch.StartNew();
        var since = _listening.Elapsed;
        while (!Named(groups, instant) && waiting.Elapsed < patience && !IsQuiet(since) && !ended.WaitOne(Poll))
        {
        }

        lock (_lock)
        {
            var period = when ?? $"over {_listening.Elapsed.TotalSeconds.ToString("0.0", CultureInfo.InvariantCulture)} s";
            return _tally.Labels(period, $"no request started on these threads {period}", instant);
        }
    }

    // Counted from the later of the last event and the start of the wait: events arrive in batches, and the snapshot's own
    // recording and analysis take longer than a quiet spell.
    private bool IsQuiet(TimeSpan since)
    {
        lock (_lock)
        {
            return _listening.Elapsed - (_lastEvent > since ? _lastEvent : since) >= Quiet;
        }
    }

    private bool Named(IReadOnlyList<IReadOnlyList<int>> groups, DateTime instant)
    {
        lock (_lock)
        {
            return groups.All(threads => threads.Any(thread => _tally.EndpointAt(thread, instant) is not null));
        }
    }
}
