using System.Globalization;
using DiagnosticScenarios.Tests.Load;
using DiagnosticScenarios.Tests.Observed;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

/// <summary>
/// The DiagnosticScenarios meter is readable from another process, beside the runtime's thread-pool counters: the
/// repository's dotnet-trace records them during the taskwait run (see <see cref="MetricsTraceObserver"/>).
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class MetricsFromOutsideTests(ObservedRuns runs, ITestOutputHelper output)
{
    [Fact]
    public async Task DotnetTrace_ReadsOurMeterAndTheThreadPoolCounters_UnderTaskWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var metrics = run.Record<MetricsTraceRecord>();

        output.WriteLine($"{run}\n{metrics.Summary}");
        // Published values, not just instrument declarations: our histograms with their quantiles (the hold time per
        // route), and the runtime's thread count with a value.
        Assert.True(metrics.Values.Any(p => p is { Meter: "DiagnosticScenarios", Instrument: "diagnosticscenarios.threadpool.queue_delay", Unit: "ms", Tags: "" }
            && p.Value.StartsWith("0.5=", StringComparison.Ordinal)), metrics.Summary);
        Assert.True(metrics.Values.Any(p => p is { Meter: "DiagnosticScenarios", Instrument: "diagnosticscenarios.http.server.thread_hold_time", Unit: "ms", Tags: "http.route=/api/diagscenario/taskwait" }
            && p.Value.StartsWith("0.5=", StringComparison.Ordinal)), metrics.Summary);
        Assert.True(metrics.Values.Any(p => p is { Meter: "System.Runtime", Instrument: "dotnet.thread_pool.thread.count", Unit: "{thread}" }
            && double.TryParse(p.Value, NumberStyles.Float, CultureInfo.InvariantCulture, out var threads) && threads >= 1), metrics.Summary);
    }
}
