using System.ComponentModel;
using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.PoolHealth.StackCapture;

/// <summary>
/// Records the app's own threads from a child process of it: the app starts itself with <see cref="Verb"/>; the child
/// opens the EventPipe session on its parent, says when the threads are sampled (the parent names the requests its
/// threads serve at that moment), writes the trace where the parent said and exits. The parent analyses the file.
/// </summary>
/// <remarks>
/// The session's stream is read by another process because the runtime writes the rundown at the stop while holding
/// locks its JIT and tiered compilation take, and waits whenever the reader is behind: a reader inside the app that waits
/// on one of those locks would hang the stop, and every other tool's command to the app behind it. A reader in another
/// process holds none of the app's locks; dotnet-trace and dotnet-stack read from another process too.
/// </remarks>
public static class StackRecorder
{
    /// <summary>The first argument that makes the app the recorder of a process instead of a web server.</summary>
    public const string Verb = "--record-stacks";

    private const string SampledLine = "sampled";
    private const int FailedExitCode = 3;

    // The child's own start (a runtime and the diagnostics client, compiled on the way) on top of the bounds it keeps.
    private static readonly TimeSpan StartAllowance = TimeSpan.FromSeconds(15);
    private static readonly TimeSpan KillGrace = TimeSpan.FromSeconds(15);

    // The recorder publishes no diagnostic port of its own: no tool lists it beside the app, and settings inherited from a
    // parent started under a tool (DOTNET_DiagnosticPorts with suspend, DOTNET_EnableEventPipe) cannot make it wait or trace.
    private static readonly IReadOnlyDictionary<string, string?> RecorderEnvironment = new Dictionary<string, string?>(StringComparer.Ordinal)
    {
        ["DOTNET_EnableDiagnostics"] = "0",
    };

    /// <summary>Whether the app was started as a recorder (<see cref="Verb"/> first).</summary>
    public static bool IsRecorder(string[] args) => args is [Verb, ..];

    /// <summary>
    /// The recorder: <c>--record-stacks PID PATH SAMPLE_MS ANSWER_MS DRAIN_MS BUFFER_MB</c>. Exit 0 with the trace
    /// written; <see cref="FailedExitCode"/> with one line on standard error, the failure's kind and message.
    /// </summary>
    public static int Run(string[] args)
    {
        if (args is not [Verb, var pid, var path, var sampleMs, var answerMs, var drainMs, var bufferMb]
            || Number(pid) is not { } processId || Number(sampleMs) is not { } sample || Number(answerMs) is not { } answer
            || Number(drainMs) is not { } drain || Number(bufferMb) is not { } buffer)
        {
            Console.Error.WriteLine($"usage: {Verb} PID PATH SAMPLE_MS ANSWER_MS DRAIN_MS BUFFER_MB (each number a whole one, 0 or more)");
            return 2;
        }

        var options = DiagnosisOptions.Default with
        {
            SampleDuration = TimeSpan.FromMilliseconds(sample),
            AnswerTimeout = TimeSpan.FromMilliseconds(answer),
            DrainTimeout = TimeSpan.FromMilliseconds(drain),
            BufferMegabytes = buffer,
        };
        try
        {
            StackSnapshots.Record(processId, path, options, () => Console.Out.WriteLine(SampledLine));
            return 0;
        }
        catch (DiagnosisException e)
        {
            Console.Error.WriteLine($"{e.Failure}: {e.Message}");
            return FailedExitCode;
        }
    }

    /// <summary>
    /// A <see cref="StackRecording"/> made by a child of this app, waited for on the calling thread (never the pool).
    /// </summary>
    /// <exception cref="DiagnosisException">The process cannot be recorded, or the child failed to record it (its reason).</exception>
    public static void Record(int processId, string nettracePath, DiagnosisOptions options, Action? afterSampling)
    {
        // The same answer as the session itself would give a process without a port, before a child is started for nothing.
        TargetProcess.EnsureDiagnosable(processId);

        var limit = options.AnswerTimeout + options.SampleDuration + options.DrainTimeout + StartAllowance;
        var (fileName, arguments) = Self();
        var start = new ChildProcessStart(fileName,
            [
                .. arguments, Verb, Invariant(processId), nettracePath, Invariant((long)options.SampleDuration.TotalMilliseconds),
                Invariant((long)options.AnswerTimeout.TotalMilliseconds), Invariant((long)options.DrainTimeout.TotalMilliseconds),
                Invariant(options.BufferMegabytes),
            ])
        {
            Environment = RecorderEnvironment,
            TimeLimit = limit,
            OnOutputLine = line =>
            {
                if (line == SampledLine)
                {
                    afterSampling?.Invoke();
                }
            },
            MaxCapturedChars = 64 * 1024,
        };

        ChildProcess child;
        try
        {
            child = ChildProcess.Start(start);
        }
        catch (Win32Exception e)
        {
            throw new DiagnosisException(DiagnosisFailure.PortUnreachable,
                $"The app could not start its stack recorder ({start.CommandLine}: {e.Message}): it records itself from a process of its own.", e);
        }

        var exited = child.WaitForExitAsync();
        // The child is killed at its limit and the result follows; the bound here is for a kill that does not end it.
        if (!((IAsyncResult)exited).AsyncWaitHandle.WaitOne(limit + KillGrace))
        {
            throw new DiagnosisException(DiagnosisFailure.PortUnreachable,
                $"The app's stack recorder (process {child.Id}) did not end within {(limit + KillGrace).TotalSeconds:0} s, even once killed.");
        }

#pragma warning disable VSTHRD002 // deliberate: the child's watch has completed it (the wait above); this only hands over its result
        var result = exited.GetAwaiter().GetResult();
        // Over: disposing completes at once, with no continuation to queue on a starved pool.
        child.DisposeAsync().AsTask().GetAwaiter().GetResult();
#pragma warning restore VSTHRD002

        if (result.TimedOut)
        {
            throw new DiagnosisException(DiagnosisFailure.PortUnreachable,
                $"The app's stack recorder did not finish within {limit.TotalSeconds:0} s and was killed: retry, and if it never finishes, restart the app.");
        }

        if (result.ExitCode != 0)
        {
            throw Failure(result);
        }
    }

    // The child's reason, as it gave it; or what it printed when it failed some other way.
    private static DiagnosisException Failure(ChildProcessResult result)
    {
        var last = result.Error.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries) is [.., var line] ? line : "";
        var colon = last.IndexOf(": ", StringComparison.Ordinal);
        return result.ExitCode == FailedExitCode && colon > 0 && Enum.TryParse<DiagnosisFailure>(last[..colon], out var failure)
            ? new DiagnosisException(failure, last[(colon + 2)..])
            : new DiagnosisException(DiagnosisFailure.PortUnreachable,
                $"The app's stack recorder exited with {result.ExitCode}: {(last.Length > 0 ? last : "no message")} ({result.CommandLine}).");
    }

    /// <summary>
    /// How to start this app again: through the .NET host with the app's assembly (<c>dotnet DiagnosticScenarios.dll</c>,
    /// which finds the runtimeconfig and deps files beside it), so that the recorder is a process named <c>dotnet</c> and
    /// a tool pointed at the app by name (<c>-n DiagnosticScenarios</c>) still finds one process while a capture runs; the
    /// app's own executable where there is no host (self-contained, or a single-file bundle).
    /// </summary>
    private static (string FileName, IReadOnlyList<string> Arguments) Self()
    {
        var name = typeof(StackRecorder).Assembly.GetName().Name!;
        var assembly = Path.Combine(AppContext.BaseDirectory, name + ".dll");
        return File.Exists(assembly) && DotnetHost.Find() is { } dotnet ? (dotnet, [assembly]) : (Environment.ProcessPath ?? name, []);
    }

    private static int? Number(string text) => int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var number) ? number : null;

    private static string Invariant(long value) => value.ToString(CultureInfo.InvariantCulture);
}
