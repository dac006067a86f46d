using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;
using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Load;
using DiagnosticScenarios.Tests.ThreadPoolHealth;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Metrics;

/// <summary>The scrape needs no thread-pool thread: it answers while the pool is starved, when Prometheus needs it most.</summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class ScrapeUnderStarvationTests(ITestOutputHelper output)
{
    // Prometheus's scrape timeout at the shipped one-second interval.
    private static readonly TimeSpan ScrapeTimeout = TimeSpan.FromSeconds(1);

    [Fact]
    public async Task Scrape_AnswersWithinItsTimeout_WhileABlockingBurstStarvesThePool()
    {
        await using var server = await HealthApp.StartAsync();
        using var app = new HttpClient { BaseAddress = server.BaseAddress, Timeout = System.Threading.Timeout.InfiniteTimeSpan };
        using var scraper = await server.LivePageClientAsync();
        using var leave = new CancellationTokenSource();

        // The default blocking burst: 1000 tasks that each block a pool thread for a second.
        var burst = app.GetAsync(new Uri("api/diagscenario/taskburst", UriKind.Relative), leave.Token);
        var scrapes = new List<(TimeSpan? Took, long QueueLength)>();
        TimeSpan? ping;
        try
        {
            await WaitForQueueAsync(scraper, minimum: 100);
            for (var i = 0; i < 3; i++)
            {
                scrapes.Add(await ScrapeAsync(scraper));
            }

            ping = await Ping.AnswerTimeAsync(app, ScrapeTimeout);
        }
        finally
        {
            await leave.CancelAsync();
            await ((Task)burst).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
        }

        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"scrapes while starved: {string.Join(", ", scrapes.Select(s => s.Took is { } took ? $"{took.TotalMilliseconds:0} ms (queue {s.QueueLength})" : "unanswered"))}; ping {(ping is { } p ? $"{p.TotalMilliseconds:0} ms" : $"unanswered within {ScrapeTimeout.TotalSeconds:0} s")}"));
        Assert.True(ping is null, $"ping answered in {ping} during the burst: the pool was not starved, so this test proves nothing");
        Assert.All(scrapes, s => Assert.True(s.Took < ScrapeTimeout, $"a scrape took {(s.Took is { } took ? $"{took.TotalMilliseconds:0} ms" : "more than 5 s")} while the pool starved"));
        Assert.All(scrapes, s => Assert.True(s.QueueLength >= 100, $"a scrape reported a queue of {s.QueueLength} during the burst"));
    }

    // Read from the live page's snapshot, which answers off the pool too, so a scrape that needs the pool fails below, not here.
    private static async Task WaitForQueueAsync(HttpClient livePage, long minimum)
    {
        var (queued, last) = await Poll.UntilAsync(
            () => livePage.GetFromJsonAsync<JsonElement>(new Uri("api/threadpool", UriKind.Relative)),
            snapshot => snapshot.GetProperty("pendingWorkItems").GetInt64() >= minimum,
            TimeSpan.FromSeconds(10),
            TimeSpan.FromMilliseconds(100));
        Assert.True(queued, $"The burst did not queue {minimum} work items within 10 s: {last}");
    }

    // How long a scrape took and the queue it reported; no time when it had not answered after five scrape timeouts.
    private static async Task<(TimeSpan? Took, long QueueLength)> ScrapeAsync(HttpClient scraper)
    {
        var (answered, text, took) = await TimeoutExtensions.AnswerWithinAsync(5 * ScrapeTimeout, giveUp => scraper.GetStringAsync(new Uri("metrics", UriKind.Relative), giveUp));
        if (!answered)
        {
            return (null, -1);
        }

        var line = text!.Split('\n').Single(l => l.StartsWith(StarvationRulePrometheus.QueueLength + "{", StringComparison.Ordinal));
        return (took, long.Parse(line[(line.LastIndexOf(' ') + 1)..], CultureInfo.InvariantCulture));
    }
}
