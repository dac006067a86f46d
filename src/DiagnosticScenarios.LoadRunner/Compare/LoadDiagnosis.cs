using System.Diagnostics;
using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>
/// One server diagnosed from outside while its load runs: a wait trace (the runtime's wait events with their stacks, the
/// pool's adjustments, ASP.NET Core's hosting events) open before the load starts and closed when it is over, so it sees
/// the cold pool's first adjustments and every request the load started; and a stack snapshot some time into the load
/// (half-way by default), whose threads are tied to their requests by the hosting events the wait trace recorded up to
/// the snapshot. Each is recorded on a thread of its own to a file; analysis waits for the load to end.
/// </summary>
public sealed class LoadDiagnosis : IDisposable
{
    private static readonly TimeSpan SessionPatience = TimeSpan.FromSeconds(30);

    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("compare-diagnosis-");
    private readonly ManualResetEventSlim _loadOver = new();
    private readonly TaskCompletionSource _recording = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Task _waits;
    private readonly TimeSpan _snapshotAfter;
    private Task<TimeSpan>? _stacks;

    private LoadDiagnosis(int processId, TimeSpan snapshotAfter)
    {
        _snapshotAfter = snapshotAfter;
        _waits = Task.Factory.StartNew(() => WaitAnalyzer.Record(processId, () =>
        {
            _recording.TrySetResult();
            _loadOver.Wait();
        }, WaitTrace, counters: true), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
    }

    private string WaitTrace => Path.Combine(_folder.FullName, "waits.nettrace");

    private string StackTrace => Path.Combine(_folder.FullName, "stacks.nettrace");

    /// <summary>
    /// Returns once the wait trace records, with the snapshot's countdown started: the caller starts the load then, so the
    /// trace sees every request of it start (a blocked request may hold its thread for the whole countdown), and calls
    /// <see cref="FinishRecordingAsync"/> when it ends, while the server is still up.
    /// </summary>
    /// <exception cref="DiagnosisException">The server's diagnostic port did not open a session.</exception>
    public static async Task<LoadDiagnosis> StartAsync(int processId, TimeSpan snapshotAfter, CancellationToken cancellationToken)
    {
        var diagnosis = new LoadDiagnosis(processId, snapshotAfter);
#pragma warning disable VSTHRD003 // deliberate: this diagnosis's own recording thread; the runner has no SynchronizationContext
        try
        {
            // A session that failed to open ends the recording thread first, and fails here saying why.
            await Task.WhenAny(diagnosis._recording.Task, diagnosis._waits).WaitAsync(SessionPatience, cancellationToken);
            if (!diagnosis._recording.Task.IsCompleted)
            {
                await diagnosis._waits;
                throw new MeasurementException("The wait trace ended before it recorded.");
            }
        }
        catch
        {
            diagnosis.Dispose();
            throw;
        }
#pragma warning restore VSTHRD003

        diagnosis._stacks = Task.Factory.StartNew(() =>
        {
            // By then the cold pool's threads have long reached the scenario's blocking call, and the load stays on past the snapshot.
            Thread.Sleep(snapshotAfter);
            var recording = Stopwatch.StartNew();
            StackSnapshots.Record(processId, diagnosis.StackTrace);
            return recording.Elapsed;
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        return diagnosis;
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
        var recorded = await _stacks!.WaitAsync(cancellationToken);
        return await Task.Run(() => new ScenarioDiagnosis(
            StackSnapshots.Analyze(StackTrace, DiagnosisOptions.Default, (_, instant) => RequestEvents.Read(WaitTrace, _snapshotAfter, instant)) with { CaptureMs = Math.Round(recorded.TotalMilliseconds, 1) },
            WaitAnalyzer.Analyze(WaitTrace)), cancellationToken);
    }

    public void Dispose()
    {
        // A recording still on (the comparison failed) stops, and its thread ends, before its folder goes: the wait trace
        // at once, the snapshot once its countdown and its sampling are over.
        LoadIsOver();
        ((IAsyncResult)_waits).AsyncWaitHandle.WaitOne(SessionPatience);
        if (_stacks is not null)
        {
            ((IAsyncResult)_stacks).AsyncWaitHandle.WaitOne(_snapshotAfter + SessionPatience);
        }

        _folder.Delete(recursive: true);
        _loadOver.Dispose();
    }
}
