using System.Diagnostics;
using DiagnosticScenarios.Diagnosis;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>
/// One server diagnosed from outside while its load runs: a wait trace (the runtime's wait events with their stacks, the
/// pool's adjustments, ASP.NET Core's hosting events) open before the load starts and closed when it is over, so it sees
/// the cold pool's first adjustments; and a stack snapshot some time into the load (half-way by default) with the hosting
/// events up to it. Each is recorded on a thread of its own to a file; analysis waits for the load to end.
/// </summary>
internal sealed class LoadDiagnosis : IDisposable
{
    private static readonly TimeSpan SessionPatience = TimeSpan.FromSeconds(30);

    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("compare-diagnosis-");
    private readonly ManualResetEventSlim _loadOver = new();
    private readonly TaskCompletionSource _recording = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Task _waits;
    private Task<(TimeSpan Recorded, RequestLabels Requests)>? _stacks;

    private LoadDiagnosis(int processId)
    {
        _waits = Task.Factory.StartNew(() => WaitAnalyzer.Record(processId, () =>
        {
            _recording.TrySetResult();
            _loadOver.Wait();
        }, WaitTrace), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
    }

    private string WaitTrace => Path.Combine(_folder.FullName, "waits.nettrace");

    private string StackTrace => Path.Combine(_folder.FullName, "stacks.nettrace");

    /// <summary>
    /// Returns once the wait trace and the hosting events record, with the snapshot's countdown started: the caller starts
    /// the load then, so every request of it is labelled (a blocked request may hold its thread for the whole countdown),
    /// and calls <see cref="FinishRecordingAsync"/> when it ends, while the server is still up.
    /// </summary>
    /// <exception cref="DiagnosisException">The server's diagnostic port did not open a session.</exception>
    public static async Task<LoadDiagnosis> StartAsync(int processId, TimeSpan snapshotAfter, CancellationToken cancellationToken)
    {
        var diagnosis = new LoadDiagnosis(processId);
#pragma warning disable VSTHRD003 // deliberate: this diagnosis's own recording threads; the runner has no SynchronizationContext
        try
        {
            await Recording(diagnosis._recording.Task, diagnosis._waits, "wait trace", cancellationToken);
            var requestsRecording = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            diagnosis._stacks = Task.Factory.StartNew(() =>
            {
                // By then the cold pool's threads have long reached the scenario's blocking call, and the load stays on past the snapshot.
                var recorded = TimeSpan.Zero;
                var requests = HostingRequests.Record(processId, snapshotAfter, () =>
                {
                    var recording = Stopwatch.StartNew();
                    StackSnapshots.Record(processId, diagnosis.StackTrace);
                    recorded = recording.Elapsed;
                }, recording: requestsRecording.SetResult);
                return (recorded, requests);
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            await Recording(requestsRecording.Task, diagnosis._stacks, "hosting events' trace", cancellationToken);
        }
        catch
        {
            diagnosis.Dispose();
            throw;
        }
#pragma warning restore VSTHRD003

        return diagnosis;
    }

    // Waits until a recording thread's session is on; a session that failed to open fails here, saying why.
    private static async Task Recording(Task on, Task recorder, string what, CancellationToken cancellationToken)
    {
#pragma warning disable VSTHRD003 // deliberate: the tasks of this diagnosis's own recording threads
        await Task.WhenAny(on, recorder).WaitAsync(SessionPatience, cancellationToken);
        if (!on.IsCompleted)
        {
            await recorder;
            throw new InvalidOperationException($"The {what} ended before it recorded.");
        }
#pragma warning restore VSTHRD003
    }

    /// <summary>Ends the wait trace.</summary>
    private void LoadIsOver() => _loadOver.Set();

    /// <summary>
    /// Ends the wait trace and waits for both recordings, while the server is still up (stopping a session makes it write a
    /// rundown); a recording that failed fails the comparison, saying why.
    /// </summary>
    public async Task FinishRecordingAsync(CancellationToken cancellationToken)
    {
        LoadIsOver();
        await _waits.WaitAsync(cancellationToken);
        await _stacks!.WaitAsync(cancellationToken);
    }

    /// <summary>Analyses the finished recordings: the server may be gone by then.</summary>
    public async Task<ScenarioDiagnosis> AnalyzeAsync(CancellationToken cancellationToken)
    {
        LoadIsOver();
        await _waits.WaitAsync(cancellationToken);
        var (recorded, requests) = await _stacks!.WaitAsync(cancellationToken);
        return await Task.Run(() => new ScenarioDiagnosis(
            StackSnapshots.Analyze(StackTrace, requests: requests) with { CaptureMs = Math.Round(recorded.TotalMilliseconds, 1) },
            WaitAnalyzer.Analyze(WaitTrace)), cancellationToken);
    }

    public void Dispose()
    {
        // A recording still on (the comparison failed) stops, and its thread ends, before its folder goes.
        LoadIsOver();
        ((IAsyncResult)_waits).AsyncWaitHandle.WaitOne(SessionPatience);
        _folder.Delete(recursive: true);
        _loadOver.Dispose();
    }
}
