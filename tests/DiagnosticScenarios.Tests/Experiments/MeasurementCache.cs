using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.LoadRunner.Compare;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// The measurements one test class shares, as a class fixture: each scenario measured once, when a test first asks for it,
/// on a fresh server of its own with the same options, so every test of the class compares figures taken the same way in
/// the same run (the async baseline is measured once, not once per test).
/// </summary>
public abstract class MeasurementCache
{
    private readonly Dictionary<(string Scenario, int? MinWorkerThreads), (Task<Measurement> Task, TimeSpan Timeout)> _results = [];

    /// <summary>Start, warm-up, load, drain, stop and the snapshot's analysis, with room for a loaded CI machine.</summary>
    public static readonly TimeSpan MeasurementTimeout = TimeSpan.FromSeconds(60);

    /// <summary>The options every measurement of the class uses; the scenario (and the min-threads workaround) is per call.</summary>
    protected abstract ComparisonOptions Options { get; }

    /// <summary>
    /// Scenarios measured together, by one <c>compare</c>, as soon as a test asks for any of them: each still on a fresh
    /// server of its own, loaded the same way, but the runner starts once and starts each server one measurement ahead,
    /// up and idle before the load it waits through. Every scenario of a batch has the same <see cref="OptionsFor"/>.
    /// </summary>
    protected virtual IEnumerable<IReadOnlyList<string>> Batches => [];

    /// <summary>The same for the measurements with the pool's minimum raised.</summary>
    protected virtual IEnumerable<IReadOnlyList<string>> RaisedMinimumBatches => [];

    /// <summary>The options of one scenario's measurement: <see cref="Options"/>, unless a scenario needs its own (a longer timeout).</summary>
    protected virtual ComparisonOptions OptionsFor(string scenario) => Options;

    /// <summary>
    /// When set, every measurement of the class is diagnosed from outside (<c>compare --diagnose</c>): a stack snapshot of its
    /// server this long into the load and a trace of its waits over the load. The GOOD and the BAD side of each comparison
    /// bear the same sampling pauses.
    /// </summary>
    protected virtual TimeSpan? SnapshotAfter => null;

    public async Task<ScenarioResult> MeasureAsync(string scenario, int? minWorkerThreads = null) =>
        (await MeasurementAsync(scenario, minWorkerThreads)).Result;

    /// <summary>The stack snapshot taken during the scenario's measured load (measuring it first if no test has).</summary>
    public async Task<StackSnapshot> SnapshotAsync(string scenario)
    {
        var measurement = await MeasurementAsync(scenario, minWorkerThreads: null);
        return measurement.Diagnosis?.Snapshot ?? throw new InvalidOperationException($"{GetType().Name} takes no stack snapshots.");
    }

    /// <summary>What <c>compare --diagnose</c> saw of the scenario's server under its load (measuring it first if no test has).</summary>
    public async Task<ScenarioDiagnosis> DiagnosisAsync(string scenario) =>
        (await MeasurementAsync(scenario, minWorkerThreads: null)).Diagnosis ?? throw new InvalidOperationException($"{GetType().Name} does not diagnose its measurements.");

    /// <summary>What the <c>compare</c> that measured the scenario printed and wrote (measuring it first if no test has).</summary>
    internal async Task<ComparisonOutput> OutputAsync(string scenario, int? minWorkerThreads = null) =>
        (await MeasurementAsync(scenario, minWorkerThreads)).Output;

    /// <summary>The wait analysis of the trace recorded during the scenario's measured load (measuring it first if no test has).</summary>
    public async Task<WaitAnalysis> WaitsAsync(string scenario)
    {
        var measurement = await MeasurementAsync(scenario, minWorkerThreads: null);
        return measurement.Diagnosis?.Waits ?? throw new InvalidOperationException($"{GetType().Name} records no waits.");
    }

    private Task<Measurement> MeasurementAsync(string scenario, int? minWorkerThreads)
    {
        (Task<Measurement> Task, TimeSpan Timeout) measurement;
        lock (_results)
        {
            if (!_results.TryGetValue((scenario, minWorkerThreads), out measurement))
            {
                var batches = minWorkerThreads is null ? Batches : RaisedMinimumBatches;
                var batch = batches.FirstOrDefault(b => b.Contains(scenario, StringComparer.Ordinal)) ?? [scenario];
                var options = OptionsFor(scenario);
                var otherOptions = batch.Where(name => OptionsFor(name) with { Environment = options.Environment, Scenarios = options.Scenarios } != options).ToList();
                if (otherOptions.Count > 0)
                {
                    throw new InvalidOperationException($"{GetType().Name} batches {string.Join(", ", otherOptions)} with {scenario}, whose options are not theirs: one compare measures a batch with one set of options.");
                }

                var timeout = MeasurementTimeout * batch.Count;
                var measured = RunnerProcess.MeasureAsync(
                    options with { MinWorkerThreads = minWorkerThreads, Diagnose = SnapshotAfter is not null, SnapshotAfter = SnapshotAfter },
                    batch,
                    timeout);
                foreach (var name in batch)
                {
                    _results[(name, minWorkerThreads)] = (Pick(measured, name), timeout);
                }

                measurement = _results[(scenario, minWorkerThreads)];
            }
        }

#pragma warning disable VSTHRD003 // deliberate: the measurements this cache started, shared by the tests that read them
        return measurement.Task.TimeoutAfter(measurement.Timeout);

        static async Task<Measurement> Pick(Task<IReadOnlyDictionary<string, Measurement>> measured, string name) => (await measured)[name];
#pragma warning restore VSTHRD003
    }
}
