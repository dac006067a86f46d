using System.Diagnostics;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Records an EventPipe session of a process to a <c>.nettrace</c> file, synchronously and without the thread pool:
/// the calling thread opens, waits and stops the session, and a dedicated thread copies the stream. So a target whose
/// pool is starved is recorded all the same.
/// </summary>
/// <remarks>
/// Not the target itself: at the stop, the runtime writes the rundown to the session's stream while it holds locks its
/// JIT and tiered compilation take, and waits whenever the reader is behind; a reader in the same process that needs one
/// of those locks then (a method compiled for the first time, or promoted to its optimised tier) never reads again. A
/// process records itself from a child process (the app's <c>StackRecorder</c>).
/// </remarks>
internal static class EventPipeRecorder
{
    // How long a process whose session's stream has ended may take to be gone, as its end tears it down.
    private static readonly TimeSpan ExitGrace = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Records while <paramref name="whileOn"/> runs on the calling thread, then stops the session; with <paramref name="rundown"/>,
    /// the runtime names every method at the stop. <paramref name="whileOn"/> gets a handle set when the session's stream ends
    /// before the stop, which only the process's end does: a caller that waits may wait on it too.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, its diagnostic port did not answer, or it exited during the session.</exception>
    public static void Record(DiagnosticTarget target, IReadOnlyList<EventPipeProvider> providers, Action<WaitHandle> whileOn, string path, DiagnosisOptions options, bool rundown) =>
        Run(target, providers, whileOn, options, rundown, stream => CopyToFile(stream, path));

    /// <summary>
    /// Copies the session's stream to <paramref name="path"/>. A file that cannot be written does not stop the reading:
    /// the runtime writes the session's last events, the rundown's megabytes among them, from its one diagnostic-server
    /// thread, which a stream nobody reads would hold until the session is closed, with every other tool's command to that
    /// process waiting behind it. So the rest is read and dropped, and the failure, named, comes after the session's end.
    /// </summary>
    private static void CopyToFile(Stream stream, string path)
    {
        Exception? writeError = null;
        FileStream? file = null;
        try
        {
            file = File.Create(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            writeError = e;
        }

        var buffer = new byte[81920];
        int read;
        while ((read = stream.Read(buffer)) > 0)
        {
            try
            {
                file?.Write(buffer, 0, read);
            }
            catch (IOException e)
            {
                writeError = e;
                DisposeQuietly(file);
                file = null;
            }
        }

        try
        {
            file?.Dispose();
        }
        catch (IOException e)
        {
            // The last buffered bytes, written at the close.
            writeError = e;
        }

        if (writeError is not null)
        {
            throw new DiagnosisException(DiagnosisFailure.TraceNotWritten,
                $"The trace could not be written to {path} ({writeError.GetType().Name}: {TargetProcess.FirstLine(writeError.Message)}): free space there or let this user write to it; the session was read to its end and closed, so the process can be diagnosed again.",
                writeError);
        }
    }

    private static void DisposeQuietly(FileStream? file)
    {
        try
        {
            file?.Dispose();
        }
        catch (IOException)
        {
            // It failed a write already; the flush of its buffer at the close fails the same way.
        }
    }

    /// <summary>
    /// Hands each event of a live session to <paramref name="onEvent"/>, on a thread of its own, while <paramref name="whileOn"/>
    /// runs on the calling thread (with the handle <see cref="Record"/> describes); then stops the session. No rundown: a
    /// listener of counters and events needs no method names.
    /// </summary>
    /// <exception cref="DiagnosisException">As <see cref="Record"/>.</exception>
    public static void Listen(DiagnosticTarget target, IReadOnlyList<EventPipeProvider> providers, Action<TraceEvent> onEvent, Action<WaitHandle> whileOn, DiagnosisOptions options) =>
        Run(target, providers, whileOn, options, rundown: false, stream =>
        {
            using var source = new EventPipeEventSource(stream);
            source.Dynamic.All += data =>
            {
                target.Learn(data.ProcessID);
                onEvent(data);
            };
            source.Process();
        });

    // Opens the session, lets `read` consume its stream on a dedicated thread while `whileOn` runs, stops it, and waits for the reader.
    private static void Run(DiagnosticTarget target, IReadOnlyList<EventPipeProvider> providers, Action<WaitHandle> whileOn, DiagnosisOptions options, bool rundown, Action<Stream> read)
    {
        var client = target.Client();
        EventPipeSession session;
        try
        {
            session = Within(target, "the start of a session", options.AnswerTimeout,
                () => client.StartEventPipeSession(providers, requestRundown: rundown, circularBufferMB: options.BufferMegabytes),
                whenLate: late => late.Dispose());
        }
        catch (Exception e) when (e is ServerNotAvailableException or ServerErrorException or UnsupportedCommandException or IOException or TimeoutException)
        {
            throw target.Unreachable(e);
        }

        var on = Stopwatch.StartNew();
        // Set by the reader as it leaves, which may be after this method has: a task's handle, which nothing disposes under it.
        var streamEnded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var streamEndedHandle = ((IAsyncResult)streamEnded.Task).AsyncWaitHandle;
        using (session)
        {
            Exception? readError = null;
            var reader = new Thread(() =>
            {
                try
                {
                    read(session.EventStream);
                }
#pragma warning disable CA1031 // deliberate: whatever the reading meets (a stream cut off mid-block reads as a FormatException) goes to the caller, never ends the process
                catch (Exception e)
#pragma warning restore CA1031
                {
                    readError = e;
                }
                finally
                {
                    streamEnded.TrySetResult();
                }
            })
            {
                IsBackground = true,
                Name = "EventPipe session reader",
            };
            reader.Start();

            whileOn(streamEndedHandle);

            // A runtime ends a session's stream before it is asked to stop as its process ends; where the process still runs
            // (a port that is not a runtime's), the stop below says what went wrong.
            if (streamEnded.Task.IsCompleted && target.EndsWithin(ExitGrace))
            {
                throw new DiagnosisException(DiagnosisFailure.ProcessExited,
                    $"{Capitalized(target.Name)} exited {on.Elapsed.TotalSeconds:0.0} s into the session, which ended with it: nothing more to read from it; start it again and diagnose the new process.",
                    readError);
            }

            // The stop returns once the runtime has handed over the session's last event (the rundown's, when asked for),
            // so it and the reader share the drain's time.
            var drained = Stopwatch.StartNew();
            try
            {
                Within(target, "the stop of its session", options.DrainTimeout, () =>
                {
                    session.Stop();
                    return true;
                });
            }
            catch (Exception e) when (e is ServerNotAvailableException or ServerErrorException or IOException or TimeoutException)
            {
                throw target.Unreachable(e);
            }

            var left = options.DrainTimeout - drained.Elapsed;
            if (!reader.Join(left > TimeSpan.Zero ? left : TimeSpan.Zero))
            {
                throw new DiagnosisException(DiagnosisFailure.PortUnreachable,
                    $"{Capitalized(target.Name)} did not finish its trace within {options.DrainTimeout.TotalSeconds:0} s of the stop ({drained.Elapsed.TotalSeconds:0.0} s): retry, or raise the drain timeout for a very large app.");
            }

            if (readError is DiagnosisException named)
            {
                throw named;
            }

            if (readError is not null)
            {
                throw target.Unreachable(readError);
            }
        }
    }

    /// <summary>
    /// A call to the target's diagnostic port, bounded: the client library reads the port's answer with no time limit,
    /// and a runtime that never answers (its one diagnostic-server thread held by something else) must not hold the caller
    /// for ever. The call runs on a thread of its own (<see cref="OnDedicatedThread"/>); one that outlives
    /// <paramref name="patience"/> is left to end there, <paramref name="whenLate"/> disposing what it returns, and the
    /// caller gets a <see cref="DiagnosisException"/>. The caller, when it leaves, disposes the session, closing the stream
    /// the runtime writes: a runtime blocked on that stream then ends the session itself.
    /// </summary>
    private static T Within<T>(DiagnosticTarget target, string what, TimeSpan patience, Func<T> call, Action<T>? whenLate = null)
    {
        var answer = OnDedicatedThread(call, "Diagnostic port call");
        if (!((IAsyncResult)answer).AsyncWaitHandle.WaitOne(patience))
        {
            if (whenLate is not null)
            {
                _ = answer.ContinueWith(late => whenLate(late.Result), CancellationToken.None, TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
            }

            throw new DiagnosisException(DiagnosisFailure.PortUnreachable,
                $"The diagnostic port of {target.Name} did not answer {what} within {patience.TotalSeconds:0.#} s: its runtime is busy with another diagnostic session or stuck; retry, and if it never answers, restart the process.");
        }

#pragma warning disable VSTHRD002 // deliberate: the call has ended (the wait above), so this only hands over its result or its exception
        return answer.GetAwaiter().GetResult();
#pragma warning restore VSTHRD002
    }

    private static string Capitalized(string name) => char.ToUpperInvariant(name[0]) + name[1..];

    /// <summary>Runs <paramref name="work"/> on a thread of its own and completes with its result: never a pool thread, so a starved pool cannot delay it.</summary>
    public static Task<T> OnDedicatedThread<T>(Func<T> work, string name)
    {
        var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            try
            {
                done.SetResult(work());
            }
#pragma warning disable CA1031 // deliberate: every failure is handed to the awaiting caller
            catch (Exception e)
#pragma warning restore CA1031
            {
                done.SetException(e);
            }
        })
        {
            IsBackground = true,
            Name = name,
        };
        thread.Start();
        return done.Task;
    }
}
