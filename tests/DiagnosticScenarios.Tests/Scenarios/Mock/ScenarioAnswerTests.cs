using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text.RegularExpressions;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Mock;

/// <summary>
/// What each scenario answers, one request at a time, beside the other functional tests: the bodies, the burst's report,
/// the memory scenarios. No clock decides here but lower bounds, which a busy neighbour cannot break, the burst's report
/// held to the request's own time, and memspike's ceiling of eight times its second; the unloaded latencies and the CPU
/// scenario's spin are <see cref="ScenarioEndpointTests"/>', alone.
/// </summary>
[StartsEarly("each scenario's delay and memspike's seconds: 7 s, most of it waiting")]
public sealed class ScenarioAnswerTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Theory]
    [MemberData(nameof(CatalogueData.MockShapes), MemberType = typeof(CatalogueData))]
    public async Task MockScenario_AnswersSuccessName_WithShortDelay(string scenario)
    {
        using var client = _app.CreateClient();

        var (status, body) = await ScenarioEndpointTests.GetAsync(client, $"/api/diagscenario/{scenario}?delayMs=1");

        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal($"success:{scenario}", body);
    }

    [Theory]
    [InlineData("async")]
    [InlineData("blocking")]
    public async Task TaskBurst_ReportsModeCountAndElapsed(string mode)
    {
        using var client = _app.CreateClient();

        var watch = Stopwatch.StartNew();
        var (status, body) = await ScenarioEndpointTests.GetAsync(client, $"/api/diagscenario/taskburst?count=4&delayMs=100&mode={mode}");
        watch.Stop();

        Assert.Equal(HttpStatusCode.OK, status);
        AssertBurstReport(body, $"mode={mode} count=4 delayMs=100", TimeSpan.FromMilliseconds(100), watch.Elapsed);
    }

    /// <summary>
    /// The burst's report, and its elapsed time between the tasks' delay (none of them can end before it) and the time the
    /// whole request took.
    /// </summary>
    private static void AssertBurstReport(string body, string expected, TimeSpan delay, TimeSpan request)
    {
        var match = Regex.Match(body, $"^success:taskburst {expected} elapsedMs=([0-9]+)$");
        Assert.True(match.Success, body);
        var elapsed = TimeSpan.FromMilliseconds(long.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture));
        Assert.True(elapsed >= delay - ScenarioEndpointTests.TimerResolution && elapsed <= request, $"{body}: the request took {request.TotalMilliseconds:F0} ms");
    }

    [Fact]
    public async Task TaskBurst_DefaultsToBlockingMode_WhenModeIsOmitted()
    {
        using var client = _app.CreateClient();

        // A small burst keeps the blocking default short.
        var watch = Stopwatch.StartNew();
        var (status, body) = await ScenarioEndpointTests.GetAsync(client, "/api/diagscenario/taskburst?count=4&delayMs=100");
        watch.Stop();

        Assert.Equal(HttpStatusCode.OK, status);
        AssertBurstReport(body, "mode=blocking count=4 delayMs=100", TimeSpan.FromMilliseconds(100), watch.Elapsed);
    }

    [Fact]
    public async Task TaskBurst_DefaultsToThousandTasksOfOneSecond_WhenCountAndDelayAreOmitted()
    {
        using var client = _app.CreateClient();

        // The async mode keeps the thousand one-second tasks to about a second; the blocking run is TaskBurstLoadTests'.
        var watch = Stopwatch.StartNew();
        var (status, body) = await ScenarioEndpointTests.GetAsync(client, "/api/diagscenario/taskburst?mode=async");
        watch.Stop();

        Assert.Equal(HttpStatusCode.OK, status);
        AssertBurstReport(body, "mode=async count=1000 delayMs=1000", TimeSpan.FromSeconds(1), watch.Elapsed);
    }

    [Fact]
    public async Task MemSpike_AnswersAfterTheGivenSeconds()
    {
        using var client = _app.CreateClient();

        var watch = Stopwatch.StartNew();
        var (status, body) = await ScenarioEndpointTests.GetAsync(client, "/api/diagscenario/memspike/1");
        watch.Stop();

        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("success:memspike", body);
        // Its second, then the wave of two million objects in progress finished and collected. Eight seconds leaves a slow,
        // shared machine room; ten times its second, a loop that misread its seconds, would not fit.
        Assert.InRange(watch.Elapsed, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(8));
    }

    [Fact]
    public async Task MemLeak_AnswersSuccess_UnderTheCap()
    {
        using var client = _app.CreateClient();

        // The scenario's cache is static by design: this 1 KB stays in the test host for good, which no other test minds
        // (the cap test counts what is already leaked).
        var (status, body) = await ScenarioEndpointTests.GetAsync(client, "/api/diagscenario/memleak/1");

        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("success:memleak", body);
    }
}
