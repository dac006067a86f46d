using System.Text.Json;
using DiagnosticScenarios.LoadRunner.Cli;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.LoadRunner;

/// <summary>The load runner's own promises, against a real server process.</summary>
[Trait(TestCategory.Name, TestCategory.Load)]
[StartsEarly("three timed loads against servers of its own: 11 s")]
public sealed class LoadRunnerTests
{
    [Fact]
    public async Task OpenLoop_CountsLatencyFromTheIntendedSendTime_WhenTheServerFallsBehind()
    {
        // One connection and a 200 ms query serve 5 req/s; asking 10 req/s for 1 s queues the later requests in the client.
        await using var server = await LoadExperiment.StartServerAsync();
        var url = new Uri(server.BaseAddress, "api/diagscenario/taskasyncwait?delayMs=200");
        // A fresh server answers its first request of a route late (routing and JIT): warmed up first.
        await LoadGenerator.RunAsync(new LoadOptions { Url = url, Connections = 1, Requests = 1 }).DefaultTimeout();

        var closed = await LoadGenerator.RunAsync(new LoadOptions { Url = url, Connections = 1, Requests = 10 }).DefaultTimeout();
        var open = await LoadGenerator.RunAsync(new LoadOptions { Url = url, Connections = 1, Rate = 10, Duration = TimeSpan.FromSeconds(1) }).DefaultTimeout();

        // Closed loop: every request waits one query (~200 ms), hiding the backlog. Open loop: the 10th request was due
        // at 0.9 s and answered at about 2.0 s, so it waited about 1.1 s; latency grows with the backlog.
        // The closed loop's median, not its maximum: one pause of either process (a GC, a tier-1 JIT) can hold one request;
        // a backlog would lengthen them all.
        Assert.Equal(10, closed.Completed);
        Assert.Equal(10, open.Completed);
        Assert.True(closed.Latency.P50 < 400, $"closed loop: {CompareSummary(closed)}");
        Assert.True(open.Latency.Max >= 900, $"open loop did not count the queueing: {CompareSummary(open)}");
    }

    [Fact]
    public async Task RunCommand_WritesAJsonReport_WithStatusCodesAndPercentilesInMilliseconds()
    {
        await using var server = await LoadExperiment.StartServerAsync();
        using var output = new StringWriter();
        using var error = new StringWriter();

        // Forty requests that each wait 100 ms on the server: no latency of theirs can be shorter.
        var exitCode = await CommandLine.RunAsync(
            ["run", "--url", new Uri(server.BaseAddress, "api/diagscenario/taskasyncwait?delayMs=100").ToString(), "-c", "4", "-n", "40", "--json"], output, error).DefaultTimeout();

        Assert.True(exitCode == 0, error.ToString());
        using var json = JsonDocument.Parse(output.ToString());
        Assert.Equal(40, json.RootElement.GetProperty("completed").GetInt64());
        Assert.Equal(40, json.RootElement.GetProperty("statusCodes").GetProperty("200").GetInt64());
        var latency = json.RootElement.GetProperty("latency");
        // About the delay at least, and not a thousand times it or a thousandth of it (seconds, microseconds or ticks for
        // milliseconds). The server's timer can end a delay a few milliseconds early, hence 90 for the 100 ms one.
        Assert.All(["min", "p50", "p90", "p95", "p99", "max"], figure => Assert.True(latency.GetProperty(figure).GetDouble() >= 90, $"{figure}: {latency}"));
        Assert.True(latency.GetProperty("p50").GetDouble() < 1000, latency.ToString());
    }

    [Fact]
    public async Task BoundedDrain_CutsOffTheRequestsStillInFlight_AndCountsThemUnfinished()
    {
        await using var server = await LoadExperiment.StartServerAsync();
        // Each request waits 5 s on the server: far past the sending and the half second of drain after it.
        var url = new Uri(server.BaseAddress, "api/diagscenario/taskasyncwait?delayMs=5000");
        // A second and a half of sending: the functional tests run four classes at once on two cores, where half a second can
        // pass before every connection has sent.
        var sending = TimeSpan.FromSeconds(1.5);
        var drain = TimeSpan.FromMilliseconds(500);

        var report = await LoadGenerator.RunAsync(new LoadOptions
        {
            Url = url,
            Connections = 4,
            Duration = sending,
            Timeout = TimeSpan.FromSeconds(10),
            Drain = drain,
        }).DefaultTimeout();

        var figures = CompareSummary(report);
        // Every request sent is still in flight at the cut.
        Assert.True(report.Sent > 0 && report.Unfinished == report.Sent && report.Completed == 0 && report.Timeouts == 0, figures);
        // Cut at the end of the drain (2 s), not after the 5 s queries, with room for a slow start.
        Assert.True(report.Elapsed < sending + drain + TimeSpan.FromSeconds(1.5), figures);
        // Each one counts as having waited until the cut: sent before the sending ended, it waited the drain at least.
        Assert.True(report.LatencyAtLeast.Min >= 0.9 * drain.TotalMilliseconds, figures);
    }

    private static string CompareSummary(LoadReport report) => LoadExperiment.Describe(report);
}
