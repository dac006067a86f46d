using System.Diagnostics;
using System.Net;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.Scenarios.Blocking;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Problems;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Blocking;

/// <summary>
/// The blocking family's routes, one request at a time: each answers its contract body, and each that waits for a delay
/// waits at least its catalogue default when the request names none.
/// </summary>
[StartsNext("each blocking route's delay: 4–6 s")]
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

    /// <summary>
    /// Each route that waits for its delay. The bodyread pair's wait is its client's upload, which HttpClient sends to its
    /// end before it returns whatever the server does, and which the in-memory server has before the action runs: it is
    /// <see cref="BadInputSweepTests"/>', on Kestrel.
    /// </summary>
    public static TheoryData<string> Delayed => [.. ScenarioCatalogue.InFamily(ScenarioCatalogue.Blocking).Where(s => s.Load is null).Select(s => s.Name)];

    [Theory]
    [MemberData(nameof(Delayed))]
    public async Task BlockingScenario_WaitsAtLeastItsCatalogueDefault_WhenTheRequestNamesNone(string name)
    {
        var scenario = CatalogueData.Find(ScenarioCatalogue.Blocking, name);
        var wait = TimeSpan.FromMilliseconds(scenario.Defaults!["delayMs"]);
        using var client = _app.CreateClient();

        var (status, body, elapsed) = await SendAsync(client, scenario, "", wait);

        Assert.Equal((HttpStatusCode.OK, $"success:blocking-{name}"), (status, body));
        Assert.True(elapsed >= wait - TimerResolution, $"{scenario.Route} answered in {elapsed.TotalMilliseconds:F0} ms, before its default wait of {wait.TotalMilliseconds} ms.");
    }

    // The upstream gone (an app of its own, whose upstream this test stops): a 503 naming it and the socket's reason, as the
    // SQL scenarios name their database, not a 500.
    [Theory]
    [InlineData("httpclient")]
    [InlineData("httpclient-async")]
    public async Task HttpClientPair_Answers503NamingTheUpstreamAndWhy_WhenItIsDown(string name)
    {
        await using var app = _app.With();
        using var client = app.CreateClient();
        app.Services.GetRequiredService<SlowUpstream>().Dispose();

        using var response = await client.GetAsync(new Uri($"/api/blocking/{name}?delayMs=0", UriKind.Relative)).DefaultTimeout();
        using var ping = await client.GetAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.ServiceUnavailable);
        Assert.Equal("The slow upstream is not available.", problem.GetProperty("title").GetString());
        Assert.Contains("Connection refused", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        // Through the app's ProblemDetails service, as every other problem it writes.
        Assert.Equal(("https://tools.ietf.org/html/rfc9110#section-15.6.4", $"/api/blocking/{name}"), (problem.GetProperty("type").GetString(), problem.GetProperty("instance").GetString()));
        Assert.False(string.IsNullOrEmpty(problem.GetProperty("traceId").GetString()), problem.ToString());
        Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
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
