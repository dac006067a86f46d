using System.Net.Http.Json;
using System.Text.Json;

namespace DiagnosticScenarios.Tests.PoolHealth.LivePage;

/// <summary>The app's <c>GET /api/threadpool</c> as the tests read it: polled until it shows what a test waits for.</summary>
internal static class ThreadPoolApi
{
    /// <summary>
    /// Reads the snapshot every <paramref name="interval"/> until <paramref name="until"/> holds or <paramref name="patience"/>
    /// has passed; answers whether it held, and the last snapshot read.
    /// </summary>
    public static Task<(bool Met, JsonElement Snapshot)> PollAsync(HttpClient client, Func<JsonElement, bool> until, TimeSpan patience, TimeSpan interval) =>
        Poll.UntilAsync(() => client.GetFromJsonAsync<JsonElement>(new Uri("/api/threadpool", UriKind.Relative)), until, patience, interval);

    /// <summary>How long the probe, the sampler or the attribution may take to show what a test waits for.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    /// <summary>The first snapshot that shows what the test waits for, read five times a second; the test fails if none does within <see cref="Patience"/>.</summary>
    public static async Task<JsonElement> ShowsAsync(HttpClient client, Func<JsonElement, bool> until)
    {
        var (met, snapshot) = await PollAsync(client, until, Patience, TimeSpan.FromMilliseconds(200));
        Assert.True(met, $"/api/threadpool never showed what the test waits for within {Patience}: {snapshot}");
        return snapshot;
    }

    /// <summary>The figures of the endpoint whose route is <paramref name="route"/>, or null when it has none yet.</summary>
    public static JsonElement? Endpoint(JsonElement snapshot, string route) =>
        snapshot.GetProperty("endpoints").EnumerateArray()
            .Where(e => e.GetProperty("route").GetString() == route)
            .Select(e => (JsonElement?)e)
            .FirstOrDefault();
}
