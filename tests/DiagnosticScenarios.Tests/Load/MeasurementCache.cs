using DiagnosticScenarios.LoadRunner.Compare;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// The measurements one test class shares, as a class fixture: each scenario measured once, when a test first asks for it,
/// on a fresh server of its own with the same options, so every test of the class compares figures taken the same way in
/// the same run (the async baseline is measured once, not once per test).
/// </summary>
public abstract class MeasurementCache
{
    private readonly Dictionary<(string Scenario, int? MinWorkerThreads), Task<ScenarioResult>> _results = [];

    /// <summary>Start, warm-up, load, drain and stop, with room for a loaded CI machine.</summary>
    public static readonly TimeSpan MeasurementTimeout = TimeSpan.FromSeconds(60);

    /// <summary>The options every measurement of the class uses; the scenario (and the min-threads workaround) is per call.</summary>
    protected abstract ComparisonOptions Options { get; }

    public Task<ScenarioResult> MeasureAsync(string scenario, int? minWorkerThreads = null)
    {
        Task<ScenarioResult>? measurement;
        lock (_results)
        {
            if (!_results.TryGetValue((scenario, minWorkerThreads), out measurement))
            {
                measurement = RunnerProcess.MeasureAsync(Options with { MinWorkerThreads = minWorkerThreads }, scenario, MeasurementTimeout);
                _results[(scenario, minWorkerThreads)] = measurement;
            }
        }

        return measurement.TimeoutAfter(MeasurementTimeout);
    }
}
