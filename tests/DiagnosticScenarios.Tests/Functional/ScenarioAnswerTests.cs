using System.Diagnostics;
using System.Net;
using DiagnosticScenarios.Catalogue;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Functional;

/// <summary>
/// What each scenario answers, one request at a time, beside the other functional tests: the bodies, the burst's report, the
/// memory scenarios. No clock decides here but lower bounds, which a busy neighbour cannot break, and memspike's ceiling
/// of twenty times its second; the unloaded latencies and the CPU scenario's spin are <see cref="ScenarioEndpointTests"/>', alone.
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

        var (status, body) = await ScenarioEndpointTests.GetAsync(client, $"/api/diagscenario/taskburst?count=4&delayMs=10&mode={mode}");

        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Matches($"^success:taskburst mode={mode} count=4 delayMs=10 elapsedMs=[0-9]+$", body);
    }

    [Fact]
    public async Task TaskBurst_DefaultsToBlockingMode_WhenModeIsOmitted()
    {
        using var client = _app.CreateClient();

        // A small burst keeps the blocking default short.
        var (status, body) = await ScenarioEndpointTests.GetAsync(client, "/api/diagscenario/taskburst?count=4&delayMs=10");

        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Matches("^success:taskburst mode=blocking count=4 delayMs=10 elapsedMs=[0-9]+$", body);
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
        Assert.Matches("^success:taskburst mode=async count=1000 delayMs=1000 elapsedMs=[0-9]+$", body);
        Assert.True(watch.Elapsed >= TimeSpan.FromSeconds(1) - ScenarioEndpointTests.TimerResolution, $"the burst of one-second tasks answered after {watch.Elapsed.TotalMilliseconds:F0} ms");
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
        Assert.InRange(watch.Elapsed, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(20));
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
