using DiagnosticScenarios.LoadRunner.Compare;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// The physics of thread-pool starvation, measured: each scenario on a fresh server process with a cold pool pinned to
/// two processors, 125 connections for 5 s (10 s for absolute bounds) from a load-runner process, figures compared with taskasyncwait measured the same way
/// in the same test. Margins are ratios calibrated on a 2-core machine; the measured values are noted beside each one.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
public sealed class StarvationLoadTests(ITestOutputHelper output)
{
    private const double Delay = LoadExperiment.DelayMs;

    [Fact]
    public async Task TaskAsyncWait_StaysNearBaseline_Under125ConcurrentRequests()
    {
        var result = await LoadExperiment.MeasureAsync("taskasyncwait", output, duration: LoadExperiment.SteadyStateDuration);

        var load = result.Load;
        var figures = LoadExperiment.Describe(result);
        // Measured in 10 s runs on this 2-core machine: p95 512, 527, 530 ms; once 921 ms (and 87 % throughput) while other
        // processes loaded the cores. A stall of the whole machine delays every request in flight at that moment.
        Assert.True(load.Latency.P95 <= 1.5 * Delay, $"p95 {load.Latency.P95:0} ms > 1.5 × {Delay} ms. {figures}");
        // Measured: 98.4–98.9 % of 250 req/s in the same runs (87 % in the disturbed one).
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
        // Measured: 5.70–5.97 over 5 runs of all six scenarios (every BAD request still waiting at the 3 s timeout).
        Assert.True(medianRatio >= 2, $"{scenario}: median only {medianRatio:0.00} × taskasyncwait's. {figures}");
        // Measured: 0.000–0.007 in the same 30 measurements.
        Assert.True(throughputRatio <= 0.5, $"{scenario}: throughput {throughputRatio:P0} of taskasyncwait's. {figures}");
    }

    [Fact]
    public async Task Ping_IsSlowerUnderBadLoad_ThanUnderGoodLoad()
    {
        var good = await LoadExperiment.MeasureAsync("taskasyncwait", output);
        var bad = await LoadExperiment.MeasureAsync("tasksleepwait", output);

        var figures = $"{LoadExperiment.Describe(good)}\n{LoadExperiment.Describe(bad)}";
        var ratio = bad.Ping.LatencyAtLeast.P50 / Math.Max(good.Ping.LatencyAtLeast.P50, 1);
        // Measured: 626–1073 over 5 runs (about 3 s, the timeout, against 3–5 ms).
        Assert.True(ratio >= 10, $"ping median under tasksleepwait only {ratio:0.0} × under taskasyncwait. {figures}");
    }

    [Theory]
    [InlineData("taskwait")]
    [InlineData("syncio")]
    public async Task SetMinThreadsAboveTheConnectionCount_RescuesBadScenario_AtTheCostOfThreads(string scenario)
    {
        const int minThreads = 200;
        var good = await LoadExperiment.MeasureAsync("taskasyncwait", output, duration: LoadExperiment.SteadyStateDuration);
        var rescued = await LoadExperiment.MeasureAsync(scenario, output, minWorkerThreads: minThreads, duration: LoadExperiment.SteadyStateDuration);

        var figures = $"{LoadExperiment.Describe(good)}\n{LoadExperiment.Describe(rescued)}";
        output.WriteLine($"The rescue of {scenario} took {rescued.PeakThreads} threads at peak ({good.PeakThreads} for taskasyncwait), {rescued.ThreadsAtEnd} at the end.");
        var medianRatio = rescued.Load.Latency.P50 / good.Load.Latency.P50;
        var throughputRatio = rescued.Load.RequestsPerSecond / good.Load.RequestsPerSecond;
        // Measured, 2 runs of both scenarios: median ratio 0.994–0.998, throughput ratio 0.90–1.09. The median is the
        // robust figure: in 10 earlier measurements of the rescued scenarios alone it stayed at 501–508 ms (taskasyncwait: 502–512 ms)
        // even when other processes on the machine pushed their p95 to 1.5 s.
        Assert.True(medianRatio <= 1.2, $"{scenario} with {minThreads} min threads: median {medianRatio:0.00} × taskasyncwait's. {figures}");
        Assert.True(throughputRatio >= 0.8, $"{scenario} with {minThreads} min threads: throughput {throughputRatio:P0} of taskasyncwait's. {figures}");
        Assert.True(rescued.Load.Failures == 0, $"failures. {figures}");
        // The price: a thread per blocked request. Measured: peak 152–222 threads in 14 measurements, against 22–27 for taskasyncwait.
        Assert.True(rescued.PeakThreads >= LoadExperiment.Connections, $"only {rescued.PeakThreads} threads for {LoadExperiment.Connections} blocked requests. {figures}");
    }
}
