using System.Globalization;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// The DiagnosticScenarios meter is readable from another process, beside the runtime's thread-pool counters: the
/// repository's dotnet-trace records them during the tasksleepwait run (see <see cref="MetricsTraceObserver"/>).
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class MetricsFromOutsideTests(ObservedRuns runs, ITestOutputHelper output)
{
    [Fact]
    public async Task DotnetTrace_ReadsOurMeterAndTheThreadPoolCounters_UnderTaskSleepWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskSleepWait);

        var metrics = run.Record<MetricsTraceRecord>();

        output.WriteLine($"{run}\n{metrics.Summary}");
        // Published values, not just instrument declarations: our queue-delay histogram with its quantiles, the requests
        // holding a thread per route (no tasksleepwait request finishes within the session, so no hold time is published),
        // and the runtime's thread count past the processor count the pool starts with (it grows under the starvation).
        Assert.True(metrics.Values.Any(p => p is { Meter: "DiagnosticScenarios", Instrument: "diagnosticscenarios.threadpool.queue_delay", Unit: "ms", Tags: "" }
            && p.Value.StartsWith("0.5=", StringComparison.Ordinal)), metrics.Summary);
        Assert.True(metrics.Values.Any(p => p is { Meter: "DiagnosticScenarios", Instrument: "diagnosticscenarios.http.server.requests_holding_thread", Tags: "http.route=/api/diagscenario/tasksleepwait" }
            && double.TryParse(p.Value, NumberStyles.Float, CultureInfo.InvariantCulture, out var holding) && holding >= 2), metrics.Summary);
        Assert.True(metrics.Values.Any(p => p is { Meter: "System.Runtime", Instrument: "dotnet.thread_pool.thread.count", Unit: "{thread}" }
            && double.TryParse(p.Value, NumberStyles.Float, CultureInfo.InvariantCulture, out var threads) && threads > ServerOptions.DefaultProcessorCount), metrics.Summary);
    }
}
