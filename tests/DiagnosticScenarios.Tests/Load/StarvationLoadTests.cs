using DiagnosticScenarios.LoadRunner.Compare;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// The physics of thread-pool starvation, measured: each scenario on a fresh server process with a cold pool pinned to
/// two processors, 125 connections for 5 s from this process, figures compared with taskasyncwait measured the same way
/// in the same test. Margins are ratios calibrated on a 2-core machine; the measured values are noted beside each one.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
public sealed class StarvationLoadTests(ITestOutputHelper output)
{
    private const double Delay = LoadExperiment.DelayMs;

    [Fact]
    public async Task TaskAsyncWait_StaysNearBaseline_Under125ConcurrentRequests()
    {
        var result = await LoadExperiment.MeasureAsync("taskasyncwait", output);

        var load = result.Load;
        var figures = LoadExperiment.Describe(result);
        // Measured: p95 505–512 ms (1.01–1.02 × delay) in N runs.
        Assert.True(load.Latency.P95 <= 1.5 * Delay, $"p95 {load.Latency.P95:0} ms > 1.5 × {Delay} ms. {figures}");
        // Measured: 246–248 req/s, 98–99 % of 250, in N runs.
        Assert.True(load.RequestsPerSecond >= 0.8 * LoadExperiment.LimitRequestsPerSecond, $"throughput below 80 % of the limit. {figures}");
        Assert.True(load.Failures == 0, $"failures. {figures}");
    }

    [Theory]
    [InlineData("taskwait")]
    [InlineData("tasksleepwait")]
    [InlineData("syncio")]
    [InlineData("asyncsyncio")]
    [InlineData("taskrunwait")]
    [InlineData("getawaiterresult")]
    public async Task BadScenario_IsClearlyDegraded_AgainstTaskAsyncWaitUnderTheSameLoad(string scenario)
    {
        var good = await LoadExperiment.MeasureAsync("taskasyncwait", output);
        var bad = await LoadExperiment.MeasureAsync(scenario, output);

        var figures = $"{LoadExperiment.Describe(good)}\n{LoadExperiment.Describe(bad)}";
        // The "at least" median counts requests that timed out or were still waiting with the wait they had: a starved
        // server cannot look faster because its slowest requests never came back.
        var medianRatio = bad.Load.LatencyAtLeast.P50 / good.Load.LatencyAtLeast.P50;
        var throughputRatio = bad.Load.RequestsPerSecond / good.Load.RequestsPerSecond;
        // Measured: median ratio N–N in N runs.
        Assert.True(medianRatio >= 2, $"{scenario}: median only {medianRatio:0.00} × taskasyncwait's. {figures}");
        // Measured: throughput ratio N–N in N runs.
        Assert.True(throughputRatio <= 0.5, $"{scenario}: throughput {throughputRatio:P0} of taskasyncwait's. {figures}");
    }

    [Fact]
    public async Task Ping_IsSlowerUnderBadLoad_ThanUnderGoodLoad()
    {
        var good = await LoadExperiment.MeasureAsync("taskasyncwait", output);
        var bad = await LoadExperiment.MeasureAsync("tasksleepwait", output);

        var figures = $"{LoadExperiment.Describe(good)}\n{LoadExperiment.Describe(bad)}";
        var ratio = bad.Ping.LatencyAtLeast.P50 / Math.Max(good.Ping.LatencyAtLeast.P50, 1);
        // Measured: N in N runs.
        Assert.True(ratio >= 10, $"ping median under tasksleepwait only {ratio:0.0} × under taskasyncwait. {figures}");
    }

    [Theory]
    [InlineData("taskwait")]
    [InlineData("tasksleepwait")]
    public async Task SetMinThreadsAboveTheConnectionCount_RescuesBadScenario_AtTheCostOfThreads(string scenario)
    {
        const int minThreads = 200;
        var result = await LoadExperiment.MeasureAsync(scenario, output, minWorkerThreads: minThreads);

        var load = result.Load;
        var figures = LoadExperiment.Describe(result);
        output.WriteLine($"The rescue took {result.PeakThreads} threads at peak, {result.ThreadsAtEnd} at the end.");
        Assert.True(load.Latency.P95 <= 1.5 * Delay, $"p95 {load.Latency.P95:0} ms > 1.5 × {Delay} ms. {figures}");
        Assert.True(load.RequestsPerSecond >= 0.8 * LoadExperiment.LimitRequestsPerSecond, $"throughput below 80 % of the limit. {figures}");
        Assert.True(load.Failures == 0, $"failures. {figures}");
        // The price: a thread per blocked request. Measured: peak N in N runs.
        Assert.True(result.PeakThreads >= LoadExperiment.Connections, $"only {result.PeakThreads} threads for {LoadExperiment.Connections} blocked requests. {figures}");
    }
}
