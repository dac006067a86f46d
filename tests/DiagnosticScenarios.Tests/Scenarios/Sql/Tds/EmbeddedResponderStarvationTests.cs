using System.Globalization;
using System.Net;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Sql.Tds;

/// <summary>
/// The embedded responder must not share the pool the scenarios starve: if it did, every WAITFOR would end late
/// exactly when the demo runs, and the measurements would show the responder, not the app. A server of its own (two
/// processors, a cold pool) is starved by the sync shape from this process, and its scrape says how long the pool's
/// queue waited and how late each WAITFOR was answered.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class EmbeddedResponderStarvationTests(ITestOutputHelper output)
{
    // Enough blocking requests to starve a pool that grows a thread or two a second, few enough not to spend the suite's
    // time: 20 requests of 500 ms hold 10 thread-seconds, on a pool that starts with 2 threads.
    private const int Requests = 20;
    private const int DelayMs = 500;

    // Twenty requests on a pool that grows a thread or two a second, with room for a busy machine.
    private static readonly TimeSpan Patience = TimeSpan.FromMinutes(2);

    // Bucket bounds of OpenTelemetry's default histogram (0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, ... ms) that the
    // assertions read: a probe that waited past 500 ms proves the pool starved; a WAITFOR answered within 100 ms of its
    // due time proves the responder kept time, an order of magnitude under what the starved pool shows.
    private const string Starved = "500";
    private const string OnTime = "100";

    private const string QueueDelay = "diagnosticscenarios_threadpool_queue_delay_milliseconds";
    private const string Lateness = "diagnosticscenarios_sql_responder_waitfor_lateness_milliseconds";

    [Fact]
    public async Task Responder_AnswersEachWaitforOnTime_WhileTheSyncShapeStarvesTheAppsPool()
    {
        // The connections are opened before the first request (a cold SqlClient pool's sync opens would fail instead:
        // its managed SNI needs pool threads for the pre-login handshake, dotnet/SqlClient#3118); this test is about
        // the responder's WAITFOR timing, not about logins.
        await using var server = await HealthApp.StartAsync(new Dictionary<string, string>
        {
            ["Database__Provider"] = "Embedded",
            ["Database__WarmUpConnections"] = Requests.ToString(CultureInfo.InvariantCulture),
        });
        using var client = server.CreateClient();
        client.Timeout = Patience;
        using var scraper = await server.LivePageClientAsync();
        var before = await ScrapeAsync(scraper);

        var responses = await Task.WhenAll(Enumerable.Range(0, Requests)
            .Select(_ => client.GetAsync(new Uri($"api/sqlscenario/sync?delayMs={DelayMs}", UriKind.Relative))))
            .TimeoutAfter(Patience + TimeSpan.FromSeconds(10));
        var after = await ScrapeAsync(scraper);

        var probes = Histogram.Read(after, QueueDelay) - Histogram.Read(before, QueueDelay);
        var waitfors = Histogram.Read(after, Lateness) - Histogram.Read(before, Lateness);
        output.WriteLine($"queue-delay probes {probes}; WAITFOR lateness {waitfors}");
        Assert.All(responses, r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        Assert.True(probes.Above(Starved) > 0, $"No probe waited more than {Starved} ms for a thread ({probes}): the pool was not starved, so this run proves nothing.\n{server.Output}");
        Assert.Equal(Requests, waitfors.Count);
        Assert.True(waitfors.Above(OnTime) == 0, $"{waitfors.Above(OnTime)} WAITFORs were answered more than {OnTime} ms late while the pool was starved ({waitfors}).");
        foreach (var response in responses)
        {
            response.Dispose();
        }
    }

    private static Task<string> ScrapeAsync(HttpClient scraper) =>
        scraper.GetStringAsync(new Uri("metrics", UriKind.Relative)).DefaultTimeout();

    /// <summary>A histogram's count and its cumulative buckets, from a scrape: one series, no labels but the scope's and <c>le</c>.</summary>
    private sealed record Histogram(long Count, IReadOnlyDictionary<string, long> AtMost)
    {
        public static Histogram Read(string scrape, string name)
        {
            long count = 0;
            var atMost = new Dictionary<string, long>(StringComparer.Ordinal);
            var series = 0;
            foreach (var line in scrape.Split('\n'))
            {
                if (line.StartsWith(name + "_count{", StringComparison.Ordinal))
                {
                    count = Value(line);
                    series++;
                }
                else if (line.StartsWith(name + "_bucket{", StringComparison.Ordinal))
                {
                    var le = line.IndexOf("le=\"", StringComparison.Ordinal) + 4;
                    atMost[line[le..line.IndexOf('"', le)]] = Value(line);
                }
            }

            return series <= 1 ? new Histogram(count, atMost) : throw new InvalidOperationException($"{name} has {series} series in the scrape, not one:\n{scrape}");
        }

        public long Above(string bound) =>
            Count - (AtMost.TryGetValue(bound, out var atMost) ? atMost : Count == 0 ? 0 : throw new InvalidOperationException($"No bucket le=\"{bound}\" in {this}."));

        public static Histogram operator -(Histogram after, Histogram before) =>
            new(after.Count - before.Count, after.AtMost.ToDictionary(b => b.Key, b => b.Value - before.AtMost.GetValueOrDefault(b.Key), StringComparer.Ordinal));

        public override string ToString() =>
            string.Create(CultureInfo.InvariantCulture, $"{Count} in all, {string.Join(", ", AtMost.Where(b => b.Key != "+Inf").Select(b => $"{b.Value} ≤ {b.Key} ms"))}");

        private static long Value(string line) => (long)double.Parse(line[(line.LastIndexOf(' ') + 1)..], CultureInfo.InvariantCulture);
    }
}
