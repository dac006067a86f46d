using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Globalization;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Symbols;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Stacks;

namespace DiagnosticScenarios.Diagnosis;

/// <summary>
/// Stack snapshots as dotnet-stack takes them (a few milliseconds of the sample profiler plus rundown, resolved by
/// TraceEvent), grouped and named. <see cref="Capture"/> is synchronous and needs no pool thread, so a dedicated thread of a
/// starved process can snapshot that process itself.
/// </summary>
public static class StackSnapshots
{
    private const string ThreadFramePrefix = "Thread (";

    /// <summary>Samples every managed thread of <paramref name="processId"/> and groups the stacks. Call it from a thread that is not a pool thread when the target is this process.</summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static StackSnapshot Capture(int processId, DiagnosisOptions? options = null)
    {
        options ??= DiagnosisOptions.Default;
        var trace = Path.Combine(Path.GetTempPath(), $"stacks-{processId}-{Guid.NewGuid():N}.nettrace");
        try
        {
            var recording = Stopwatch.StartNew();
            Record(processId, trace, options);
            var captureMs = recording.Elapsed.TotalMilliseconds;
            return Analyze(trace, options) with { ProcessId = processId, CaptureMs = Math.Round(captureMs, 1) };
        }
        finally
        {
            File.Delete(trace);
        }
    }

    /// <summary><see cref="Capture"/> on a thread of its own, for a caller that awaits (a test, a tool) while the target's or its own pool is starved.</summary>
    public static Task<StackSnapshot> CaptureOnDedicatedThreadAsync(int processId, DiagnosisOptions? options = null) =>
        EventPipeRecorder.OnDedicatedThread(() => Capture(processId, options), "Stack snapshot");

    /// <summary>
    /// Records what <see cref="Analyze"/> reads (the sample profiler and rundown) to <paramref name="nettracePath"/>, and no
    /// more: a caller that must disturb the target as little as possible takes the snapshot now and analyses it later.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static void Record(int processId, string nettracePath, DiagnosisOptions? options = null)
    {
        options ??= DiagnosisOptions.Default;
        EventPipeRecorder.Record(processId, [new EventPipeProvider("Microsoft-DotNETCore-SampleProfiler", EventLevel.Informational)], options.SampleDuration, nettracePath, options);
    }

    /// <summary><see cref="Record"/> on a thread of its own, for a caller that awaits.</summary>
    public static Task RecordOnDedicatedThreadAsync(int processId, string nettracePath, DiagnosisOptions? options = null) =>
        EventPipeRecorder.OnDedicatedThread(() => { Record(processId, nettracePath, options); return nettracePath; }, "Stack recording");

    /// <summary>Groups the stacks of a <c>.nettrace</c> recorded with the sample profiler and rundown (e.g. by dotnet-trace).</summary>
    /// <exception cref="DiagnosisException">The file cannot be read as a trace.</exception>
    public static StackSnapshot Analyze(string nettracePath, DiagnosisOptions? options = null)
    {
        options ??= DiagnosisOptions.Default;
        var analysis = Stopwatch.StartNew();
        var threads = new Dictionary<int, IReadOnlyList<string>>();
        using (var log = TraceLogFiles.Open(nettracePath))

        // An empty symbol path: managed frames are named by the rundown, and nothing may reach for a symbol server.
        using (var symbols = new SymbolReader(TextWriter.Null, nt_symbol_path: ""))
        {
            var stacks = new MutableTraceEventStackSource(log.TraceLog) { OnlyManagedCodeStacks = true };

            // Its defaults, as dotnet-stack runs it (turning the activity grouping off fails inside TraceEvent); the
            // activity frames it adds sit above the "Thread (id)" frame, where the walk below stops.
            var computer = new SampleProfilerThreadTimeComputer(log.TraceLog, symbols);
            computer.GenerateThreadTimeStacks(stacks);

            // A parked thread has the same stack in every sample; the first is as good as any, as dotnet-stack takes it.
            stacks.ForEach(sample =>
            {
                var (threadId, frames) = Walk(stacks, sample.StackIndex);
                if (threadId is { } id && !threads.ContainsKey(id))
                {
                    threads[id] = frames;
                }
            });
        }

        var groups = threads
            .GroupBy(t => string.Join('\n', t.Value), StringComparer.Ordinal)
            .Select(g => Group(g.Select(t => t.Key).Order().ToList(), g.First().Value, options))
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
            Groups: groups);
    }

    private static ThreadGroup Group(List<int> threadIds, IReadOnlyList<string> frames, DiagnosisOptions options)
    {
        var appFrames = FrameNames.AppFrames(frames, options.AppNamespacePrefix);
        return new ThreadGroup(
            threadIds.Count,
            FrameNames.IsPoolWorker(frames),
            BlockingFrame.Find(frames),
            appFrames.Count > 0 ? appFrames[0] : null,
            appFrames,
            threadIds,
            frames);
    }

    // Leaf to root until the "Thread (id)" pseudo-frame, which names the thread; native stretches come as one
    // UNMANAGED_CODE_TIME frame each and are left out, so the same managed stack groups the same way.
    private static (int? ThreadId, IReadOnlyList<string> Frames) Walk(StackSource stacks, StackSourceCallStackIndex index)
    {
        var frames = new List<string>();
        while (index != StackSourceCallStackIndex.Invalid)
        {
            var name = stacks.GetFrameName(stacks.GetFrameIndex(index), verboseName: false);
            if (name.StartsWith(ThreadFramePrefix, StringComparison.Ordinal))
            {
                var end = name.IndexOf(')', StringComparison.Ordinal);
                return int.TryParse(name.AsSpan(ThreadFramePrefix.Length, end - ThreadFramePrefix.Length), NumberStyles.Integer, CultureInfo.InvariantCulture, out var id)
                    ? (id, frames)
                    : (null, frames);
            }

            if (name.Contains('!', StringComparison.Ordinal))
            {
                frames.Add(name);
            }

            index = stacks.GetCallerIndex(index);
        }

        return (null, frames);
    }
}
