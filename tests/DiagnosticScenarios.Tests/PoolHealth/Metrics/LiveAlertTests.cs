using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// The shipped alert, live: a real Prometheus, configured from monitoring/, scrapes the live page of the shared observed
/// runs every second (a fresh server, two processors, 125 connections for 10 s from the page's Start load) and evaluates
/// monitoring/alerts.yml. Under taskwait the alert fires within a minute of the load's start; under taskasyncwait, the
/// same load, it never leaves inactive.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class LiveAlertTests(ObservedRuns runs, ITestOutputHelper output)
{
    private static readonly TimeSpan FiresWithin = TimeSpan.FromMinutes(1);

    [PrometheusFact]
    public async Task Alert_ReachesFiringWithinAMinute_UnderTaskWaitAt125Connections()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var history = run.Record<AlertHistory>();

        output.WriteLine($"{run}\n{history}");
        Assert.True(history.FirstFiring is { } firing && firing - run.LoadStartedAt < FiresWithin,
            $"the alert did not fire within {FiresWithin.TotalSeconds:0} s of the load's start at {run.LoadStartedAt:HH:mm:ss}: {history}");
        output.WriteLine($"fired {(history.FirstFiring!.Value - run.LoadStartedAt).TotalSeconds:0.0} s after the load started");
    }

    [PrometheusFact]
    public async Task Alert_NeverLeavesInactive_UnderTaskAsyncWaitAt125Connections()
    {
        var run = await runs.RunAsync(RunPlan.TaskAsyncWait);

        var history = run.Record<AlertHistory>();

        output.WriteLine($"{run}\n{history}");
        Assert.True(history.States.Count == 0, history.ToString());
        // Quiet with the app's series in hand (the observed runs start Prometheus watching before the load): a second of the
        // load without a good scrape would be an alert with no data.
        var during = history.Scrapes.Where(s => s.At >= run.LoadStartedAt && s.At <= run.StoppedAt).ToList();
        Assert.True(during.Count >= run.SecondsUnderLoad, $"{during.Count} scrapes in the load's {run.SecondsUnderLoad} s");
        Assert.All(during, s => Assert.True(s.Up, $"the scrape at {s.At:HH:mm:ss.fff} was down"));
    }
}
