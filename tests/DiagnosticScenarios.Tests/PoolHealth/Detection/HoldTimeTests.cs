using System.Text.Json;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Detection;

/// <summary>
/// The hold time the app attributes to each endpoint: how long a request keeps its pool thread. A class of its own, with an
/// app of its own, so that its rounds of 300 ms requests run beside the API's other tests.
/// </summary>
public sealed class HoldTimeTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task HoldTime_SinglesOutBlockingEndpoints_AndNotTheAwaitingOne()
    {
        using var client = _app.CreateClient();
        string[] routes = ["taskwait", "tasksleepwait", "syncio", "asyncsyncio", "taskasyncwait"];

        // Three rounds, judged by the median, as the SQL shapes below: a route's first request compiles its code on the
        // request thread, which on a cold machine among the parallel tests can stretch the first hold far past the delay.
        for (var round = 0; round < 3; round++)
        {
            await Task.WhenAll(routes.Select(r => client.GetStringAsync(new Uri($"/api/diagscenario/{r}?delayMs=300", UriKind.Relative)))).DefaultTimeout();
        }

        var snapshot = await ThreadPoolApi.ShowsAsync(client, s => routes.All(r => Endpoint(s, r)?.GetProperty("holdTime").GetProperty("count").GetInt32() >= 3));

        foreach (var blocking in routes[..^1])
        {
            var hold = Endpoint(snapshot, blocking)!.Value.GetProperty("holdTime").GetProperty("p50Ms").GetDouble();
            Assert.True(hold >= 250, $"{blocking} held its thread {hold} ms (median); expected about the 300 ms query");
        }

        var asyncHold = Endpoint(snapshot, "taskasyncwait")!.Value.GetProperty("holdTime").GetProperty("p50Ms").GetDouble();
        var asyncLatency = Endpoint(snapshot, "taskasyncwait")!.Value.GetProperty("latency").GetProperty("p50Ms").GetDouble();
        Assert.True(asyncLatency >= 250, $"taskasyncwait took {asyncLatency} ms (median); expected about the 300 ms query");
        Assert.True(asyncHold < 100, $"taskasyncwait held its thread {asyncHold} ms (median); an awaiting action should hand it back at once");
    }

    [Fact]
    public async Task HoldTime_SinglesOutBlockingSqlShapes_AndNotTheAsyncOne()
    {
        using var client = _app.CreateClient();
        string[] blocking = ["sync", "asyncsyncio", "wait"];
        var routes = blocking.Append("async").Select(shape => $"/api/sqlscenario/{shape}").ToArray();

        // The embedded TDS responder (the default provider) answers each WAITFOR after 300 ms. Three rounds, judged by the
        // median: a route's first request also compiles its code on the request thread, which is not what the hold time is
        // there to single out.
        for (var round = 0; round < 3; round++)
        {
            await Task.WhenAll(routes.Select(r => client.GetStringAsync(new Uri($"{r}?delayMs=300", UriKind.Relative)))).DefaultTimeout();
        }

        var snapshot = await ThreadPoolApi.ShowsAsync(client, s => routes.All(r => ThreadPoolApi.Endpoint(s, r)?.GetProperty("holdTime").GetProperty("count").GetInt32() >= 3));

        foreach (var route in routes[..^1])
        {
            var hold = ThreadPoolApi.Endpoint(snapshot, route)!.Value.GetProperty("holdTime").GetProperty("p50Ms").GetDouble();
            Assert.True(hold >= 250, $"{route} held its thread {hold} ms (median); expected about the 300 ms WAITFOR");
        }

        var asyncHold = ThreadPoolApi.Endpoint(snapshot, routes[^1])!.Value.GetProperty("holdTime").GetProperty("p50Ms").GetDouble();
        Assert.True(asyncHold < 100, $"{routes[^1]} held its thread {asyncHold} ms (median); an awaiting action should hand it back at once");
    }

    // intermittent's blocking branch, taken by every request when every=1: each holds its thread for the whole query, where
    // the default (one in 500) would await in all of three.
    [Fact]
    public async Task HoldTime_OfIntermittentWithEveryOne_IsTheWholeQuery()
    {
        using var client = _app.CreateClient();
        const string route = "/api/blocking/intermittent";

        for (var round = 0; round < 3; round++)
        {
            Assert.Equal("success:blocking-intermittent", await client.GetStringAsync(new Uri($"{route}?every=1&delayMs=300", UriKind.Relative)).DefaultTimeout());
        }

        var snapshot = await ThreadPoolApi.ShowsAsync(client, s => ThreadPoolApi.Endpoint(s, route)?.GetProperty("holdTime").GetProperty("count").GetInt32() >= 3);
        var hold = ThreadPoolApi.Endpoint(snapshot, route)!.Value.GetProperty("holdTime").GetProperty("p50Ms").GetDouble();
        Assert.True(hold >= 250, $"{route}?every=1 held its thread {hold} ms (median); expected about the 300 ms query");
    }

    private static JsonElement? Endpoint(JsonElement snapshot, string scenario) => ThreadPoolApi.Endpoint(snapshot, $"/api/diagscenario/{scenario}");
}
