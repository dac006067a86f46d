using System.Net.Http.Json;
using System.Text.Json;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

/// <summary>The app's <c>GET /api/threadpool</c> as the tests read it: polled until it shows what a test waits for.</summary>
internal static class ThreadPoolApi
{
    /// <summary>
    /// Reads the snapshot every <paramref name="interval"/> until <paramref name="until"/> holds or <paramref name="patience"/>
    /// has passed; answers whether it held, and the last snapshot read.
    /// </summary>
    public static Task<(bool Met, JsonElement Snapshot)> PollAsync(HttpClient client, Func<JsonElement, bool> until, TimeSpan patience, TimeSpan interval) =>
        Poll.UntilAsync(() => client.GetFromJsonAsync<JsonElement>(new Uri("/api/threadpool", UriKind.Relative)), until, patience, interval);

    /// <summary>The figures of the endpoint whose route is <paramref name="route"/>, or null when it has none yet.</summary>
    public static JsonElement? Endpoint(JsonElement snapshot, string route) =>
        snapshot.GetProperty("endpoints").EnumerateArray()
            .Where(e => e.GetProperty("route").GetString() == route)
            .Select(e => (JsonElement?)e)
            .FirstOrDefault();
}
