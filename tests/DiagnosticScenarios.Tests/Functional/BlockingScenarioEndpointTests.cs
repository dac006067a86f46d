using System.Diagnostics;
using System.Net;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.LoadRunner.Load;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Functional;

/// <summary>
/// The blocking family's routes, one request at a time: each answers its contract body, waits at least its catalogue
/// default when the request names none, and the bodyread pair reads a slowly uploaded body to its last piece.
/// </summary>
[StartsNext("each blocking route's delay, and a slow upload: 4–6 s")]
public sealed class BlockingScenarioEndpointTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    // Timers tick on a millisecond clock, so a delay can end a millisecond or two before a Stopwatch says it has.
    private static readonly TimeSpan TimerResolution = TimeSpan.FromMilliseconds(15);

    public static TheoryData<string> Names => [.. ScenarioCatalogue.InFamily(ScenarioCatalogue.Blocking).Select(s => s.Name)];

    [Theory]
    [MemberData(nameof(Names))]
    public async Task BlockingScenario_AnswersSuccessName_WithAShortWait(string name)
    {
        var scenario = CatalogueData.Find(ScenarioCatalogue.Blocking, name);
        using var client = _app.CreateClient();

        var (status, body, _) = await SendAsync(client, scenario, "?delayMs=1", TimeSpan.Zero);

        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal($"success:blocking-{name}", body);
    }

    [Fact]
    public async Task Intermittent_AnswersSuccessName_WhenEveryRequestTakesTheBlockingBranch()
    {
        var scenario = CatalogueData.Find(ScenarioCatalogue.Blocking, "intermittent");
        using var client = _app.CreateClient();

        var (status, body, _) = await SendAsync(client, scenario, "?every=1&delayMs=1", TimeSpan.Zero);

        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("success:blocking-intermittent", body);
    }

    /// <summary>
    /// For the bodyread pair the wait is the client's: the catalogue's slow upload, which this checks the runner's
    /// <see cref="SlowUploadContent"/> spreads over its time. That the BAD twin blocks reading it is the load test's snapshot.
    /// </summary>
    [Theory]
    [MemberData(nameof(Names))]
    public async Task BlockingScenario_WaitsAtLeastItsCatalogueDefault_WhenTheRequestNamesNone(string name)
    {
        var scenario = CatalogueData.Find(ScenarioCatalogue.Blocking, name);
        var wait = TimeSpan.FromMilliseconds(scenario.Load?.UploadMs ?? scenario.Defaults!["delayMs"]);
        using var client = _app.CreateClient();

        var (status, body, elapsed) = await SendAsync(client, scenario, "", wait);

        Assert.Equal((HttpStatusCode.OK, $"success:blocking-{name}"), (status, body));
        Assert.True(elapsed >= wait - TimerResolution, $"{scenario.Route} answered in {elapsed.TotalMilliseconds:F0} ms, before its default wait of {wait.TotalMilliseconds} ms.");
    }

    // A GET, or the catalogue's method with a body of its size uploaded over the given time.
    private static async Task<(HttpStatusCode Status, string Body, TimeSpan Elapsed)> SendAsync(HttpClient client, Scenario scenario, string query, TimeSpan uploadOver)
    {
        using var request = new HttpRequestMessage(scenario.Load is { } load ? new HttpMethod(load.Method) : HttpMethod.Get, new Uri(scenario.Route + query, UriKind.Relative))
        {
            Content = scenario.Load is { } body ? new SlowUploadContent(body.BodyBytes, uploadOver) : null,
        };
        var clock = Stopwatch.StartNew();
        using var response = await client.SendAsync(request).DefaultTimeout();
        var text = await response.Content.ReadAsStringAsync().DefaultTimeout();
        return (response.StatusCode, text, clock.Elapsed);
    }
}
