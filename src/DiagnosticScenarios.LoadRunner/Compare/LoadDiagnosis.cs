using System.Diagnostics;
using DiagnosticScenarios.Diagnosis;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>
/// One server diagnosed from outside while its load runs: a wait trace (the runtime's wait events with their stacks, the
/// pool's adjustments, ASP.NET Core's hosting events) over the load, and a stack snapshot some time into it (half-way by
/// default) with the hosting events up to it, each recorded on a thread of its own to a file. Analysis waits for the load to end.
/// </summary>
internal sealed class LoadDiagnosis : IDisposable
{
    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("compare-diagnosis-");
    private readonly Task _waits;
    private readonly Task<(TimeSpan Recorded, RequestLabels Requests)> _stacks;

    private LoadDiagnosis(int processId, TimeSpan loadDuration, TimeSpan snapshotAfter)
    {
        _waits = Task.Factory.StartNew(() => WaitAnalyzer.Record(processId, loadDuration, WaitTrace), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        _stacks = Task.Factory.StartNew(() =>
        {
            // By then the cold pool's threads have long reached the scenario's blocking call, and the load stays on past the snapshot.
            var recorded = TimeSpan.Zero;
            var requests = HostingRequests.Record(processId, snapshotAfter, () =>
            {
                var recording = Stopwatch.StartNew();
                StackSnapshots.Record(processId, StackTrace);
                recorded = recording.Elapsed;
            });
            return (recorded, requests);
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
    }

    private string WaitTrace => Path.Combine(_folder.FullName, "waits.nettrace");

    private string StackTrace => Path.Combine(_folder.FullName, "stacks.nettrace");

    public static LoadDiagnosis Start(int processId, TimeSpan loadDuration, TimeSpan snapshotAfter) => new(processId, loadDuration, snapshotAfter);

    /// <summary>Waits for both recordings and analyses them; a recording that failed fails the comparison, saying why.</summary>
    public async Task<ScenarioDiagnosis> AnalyzeAsync(CancellationToken cancellationToken)
    {
        await _waits.WaitAsync(cancellationToken);
        var (recorded, requests) = await _stacks.WaitAsync(cancellationToken);
        return await Task.Run(() => new ScenarioDiagnosis(
            StackSnapshots.Analyze(StackTrace, requests: requests) with { CaptureMs = Math.Round(recorded.TotalMilliseconds, 1) },
            WaitAnalyzer.Analyze(WaitTrace)), cancellationToken);
    }

    public void Dispose() => _folder.Delete(recursive: true);
}
