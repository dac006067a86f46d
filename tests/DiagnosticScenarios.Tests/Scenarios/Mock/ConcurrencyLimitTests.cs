using System.Net;
using System.Text.Json;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Mock;

/// <summary>The destructive scenarios are bounded at once, not only per request: beyond the limit, 429 ProblemDetails with Retry-After.</summary>
[StartsNext("held requests: a blocking burst, a spin and a memory spike, 5–8 s")]
public sealed class ConcurrencyLimitTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private const string HeldBurst = "/api/diagscenario/taskburst?count=1&mode=blocking&delayMs=3000";
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task BlockingTaskBurst_Answers429WithRetryAfter_BeyondTheConfiguredLimit_AndAsyncBurstsAreNotLimited()
    {
        await using var limited = _app.With(("Scenarios:ConcurrencyLimits:BlockingTaskBurst", "1"), ("Scenarios:ConcurrencyLimits:RetryAfterSeconds", "7"));
        using var client = limited.CreateClient();

        var held = client.GetAsync(new Uri(HeldBurst, UriKind.Relative));
        // The test server runs each request on a pool thread of its own, so a second request sent at once could reach the
        // limiter first and leave the held one refused: the second is sent only once the held one is in.
        var heldAdmitted = await AdmittedAsync(client, held, "/api/diagscenario/taskburst");
        using var refused = await client.GetAsync(ShortBurst("blocking")).DefaultTimeout();
        using var asyncBurst = await client.GetAsync(ShortBurst("async")).DefaultTimeout();
        var asyncWhileHeld = asyncBurst.StatusCode;
        var stillHeld = !held.IsCompleted;

        using var first = await held.DefaultTimeout();
        // The permit returns when the first request's pipeline ends, a moment after its answer reached the client.
        using var afterwards = await AdmittedWithinAsync(client, ShortBurst("blocking"), TimeSpan.FromSeconds(2));

        Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        Assert.True(heldAdmitted, "The held blocking burst never showed as in flight.");
        Assert.True(stillHeld, "The held blocking burst ended before the other two bursts were answered, so they prove nothing.");
        var problem = await ProblemDetailsAssert.IsProblemAsync(refused, HttpStatusCode.TooManyRequests);
        Assert.Equal(TimeSpan.FromSeconds(7), refused.Headers.RetryAfter?.Delta);
        Assert.Contains("Scenarios:ConcurrencyLimits", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.OK, asyncWhileHeld);
        Assert.Equal(HttpStatusCode.OK, afterwards.StatusCode);
    }

    /// <summary>
    /// The two scenarios that run for as long as they are asked, held by one request at the limit of 1: a second is refused
    /// while it runs. (That the permit comes back is the burst's test above; deadlock and memleak answer too soon to be held,
    /// their policies are the metadata's below.)
    /// </summary>
    [Theory]
    [InlineData("HighCpu", "/api/diagscenario/highcpu/{milliseconds}", "/api/diagscenario/highcpu/1000", "/api/diagscenario/highcpu/1")]
    [InlineData("MemSpike", "/api/diagscenario/memspike/{seconds}", "/api/diagscenario/memspike/1", "/api/diagscenario/memspike/1")]
    public async Task LongScenario_Answers429_WhileItsOneRequestRuns(string limit, string route, string heldPath, string nextPath)
    {
        await using var limited = _app.With(($"Scenarios:ConcurrencyLimits:{limit}", "1"));
        using var client = limited.CreateClient();

        var held = client.GetAsync(new Uri(heldPath, UriKind.Relative));
        var heldAdmitted = await AdmittedAsync(client, held, route);
        using var refused = await client.GetAsync(new Uri(nextPath, UriKind.Relative)).DefaultTimeout();
        var stillHeld = !held.IsCompleted;

        using var first = await held.DefaultTimeout();

        Assert.True(heldAdmitted, $"{heldPath} never showed as in flight.");
        Assert.True(stillHeld, $"{heldPath} ended before the second request was answered, so it proves nothing.");
        Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        await ProblemDetailsAssert.IsProblemAsync(refused, HttpStatusCode.TooManyRequests);
    }

    [Theory]
    [InlineData("api/diagscenario/deadlock")]
    [InlineData("api/diagscenario/highcpu/{milliseconds}")]
    [InlineData("api/diagscenario/memspike/{seconds}")]
    [InlineData("api/diagscenario/memleak/{kb}")]
    [InlineData("api/diagscenario/taskburst")]
    public void DestructiveScenario_HasAConcurrencyPolicyOfItsOwn(string route)
    {
        var endpoints = _app.Services.GetRequiredService<EndpointDataSource>().Endpoints.OfType<RouteEndpoint>();
        var policies = endpoints.Where(e => e.Metadata.GetMetadata<EnableRateLimitingAttribute>() is not null)
            .ToDictionary(e => e.RoutePattern.RawText!, e => e.Metadata.GetMetadata<EnableRateLimitingAttribute>()!.PolicyName);

        Assert.True(policies.ContainsKey(route), $"{route} has no concurrency policy; limited: {string.Join(", ", policies.Keys)}");
        Assert.Single(policies.Values, policies[route]);
    }

    private static Uri ShortBurst(string mode) => new($"/api/diagscenario/taskburst?count=1&mode={mode}&delayMs=0", UriKind.Relative);

    /// <summary>
    /// Waits until the app counts the held request in flight. The attribution counts a request only once the rate limiter has
    /// let it through, so this is the held request holding the permit. False if it ended or was refused first.
    /// </summary>
    private static async Task<bool> AdmittedAsync(HttpClient client, Task<HttpResponseMessage> held, string route)
    {
        var (met, snapshot) = await ThreadPoolApi.PollAsync(client, s => InFlight(s) > 0 || held.IsCompleted, TimeSpan.FromSeconds(10), TimeSpan.FromMilliseconds(20));
        return met && InFlight(snapshot) > 0;

        long InFlight(JsonElement snapshot) =>
            ThreadPoolApi.Endpoint(snapshot, route)?.GetProperty("inFlight").GetInt64() ?? 0;
    }

    // The last answer: the first that was not a 429, or the 429 still given when patience ran out.
    private static async Task<HttpResponseMessage> AdmittedWithinAsync(HttpClient client, Uri url, TimeSpan patience)
    {
        HttpResponseMessage? previous = null;
        var (_, last) = await Poll.UntilAsync(
            async () =>
            {
                previous?.Dispose();
                return previous = await client.GetAsync(url).DefaultTimeout();
            },
            response => response.StatusCode != HttpStatusCode.TooManyRequests, patience);
        return last;
    }
}
