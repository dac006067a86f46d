using System.Diagnostics;
using Microsoft.Diagnostics.NETCore.Client;

namespace DiagnosticScenarios.Diagnosis;

/// <summary>
/// Records an EventPipe session of a process to a <c>.nettrace</c> file, synchronously and without the thread pool:
/// the calling thread opens, waits and stops the session, and a dedicated thread copies the stream. So it works when the
/// target is this very process and its pool is starved, provided the caller is not a pool thread itself.
/// </summary>
internal static class EventPipeRecorder
{
    public static void Record(int processId, IReadOnlyList<EventPipeProvider> providers, TimeSpan duration, string path, DiagnosisOptions options) =>
        Record(processId, providers, () => Thread.Sleep(duration), path, options, rundown: true);

    /// <summary>Records while <paramref name="whileOn"/> runs on the calling thread, then stops the session; with <paramref name="rundown"/>, the runtime names every method at the stop.</summary>
    public static void Record(int processId, IReadOnlyList<EventPipeProvider> providers, Action whileOn, string path, DiagnosisOptions options, bool rundown)
    {
        TargetProcess.EnsureDiagnosable(processId);
        var client = new DiagnosticsClient(processId);
        EventPipeSession session;
        try
        {
            session = client.StartEventPipeSession(providers, requestRundown: rundown, circularBufferMB: options.BufferMegabytes);
        }
        catch (Exception e) when (e is ServerNotAvailableException or ServerErrorException or UnsupportedCommandException or IOException or TimeoutException)
        {
            throw TargetProcess.Unreachable(processId, e);
        }

        using (session)
        {
            Exception? copyError = null;
            var copier = new Thread(() =>
            {
                try
                {
                    using var file = File.Create(path);
                    session.EventStream.CopyTo(file);
                }
                catch (Exception e) when (e is IOException or ObjectDisposedException)
                {
                    copyError = e;
                }
            })
            {
                IsBackground = true,
                Name = "EventPipe trace copy",
            };
            copier.Start();

            whileOn();
            try
            {
                session.Stop();
            }
            catch (Exception e) when (e is ServerNotAvailableException or ServerErrorException or IOException or TimeoutException)
            {
                throw TargetProcess.Unreachable(processId, e);
            }

            var drained = Stopwatch.StartNew();
            if (!copier.Join(options.DrainTimeout))
            {
                throw new DiagnosisException(DiagnosisFailure.PortUnreachable,
                    $"Process {processId} did not finish its trace within {options.DrainTimeout.TotalSeconds:0} s of the stop ({drained.Elapsed.TotalSeconds:0.0} s): retry, or raise the drain timeout for a very large app.");
            }

            if (copyError is not null)
            {
                throw TargetProcess.Unreachable(processId, copyError);
            }
        }
    }

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
