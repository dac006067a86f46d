using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// The scrape needs no thread-pool thread: it answers while the pool is starved, when Prometheus needs it most. Read from
/// the real Prometheus that scrapes the shared taskwait run's live page every second, with the shipped one-second timeout.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class ScrapeUnderStarvationTests(ObservedRuns runs, ITestOutputHelper output)
{
    // The shipped scrape_timeout, the interval (PrometheusServer.ConfigFor sets the test's three intervals to one).
    private static readonly TimeSpan ScrapeTimeout = PrometheusWatch.Interval;

    [PrometheusFact]
    public async Task Prometheus_ScrapesEverySecondWithinItsTimeout_WhileTaskWaitStarvesThePool()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var scrapes = run.Record<AlertHistory>().Scrapes;
        var starved = run.SamplesUnderLoad().Where(s => s.Starved).ToList();
        output.WriteLine($"{run}\n{starved.Count} starved seconds; scrapes: " + string.Join(", ", scrapes.Select(s => string.Create(CultureInfo.InvariantCulture,
            $"{s.At:HH:mm:ss.fff} {(s.Up ? "up" : "down")} {s.Took?.TotalMilliseconds:0} ms queue {s.QueueLength}"))));
        Assert.True(starved.Count >= 3, $"only {starved.Count} starved seconds under taskwait: the pool was not starved long enough for this test to prove anything");

        var (from, to) = (starved[0].TakenAt, starved[^1].TakenAt);
        var during = scrapes.Where(s => s.At >= from && s.At <= to).ToList();
        // One scrape a second, so every whole second between the two has one (a scrape that timed out or failed is in the
        // list too, down); one missing is a second Prometheus had nothing from the app.
        var seconds = Math.Floor((to - from) / PrometheusWatch.Interval);
        Assert.True(during.Count >= seconds, $"{during.Count} scrapes in the {(to - from).TotalSeconds:0.000} s from the first starved sample to the last");
        Assert.All(during, s => Assert.True(s.Up && s.Took < ScrapeTimeout, $"the scrape at {s.At:HH:mm:ss.fff} was {(s.Up ? "up" : "down")} and took {s.Took?.TotalMilliseconds:0} ms while the pool starved"));
        // What the scrapes carried was the starved pool, not a value kept from before: a queue at least the rule's.
        var rule = new StarvationRule();
        Assert.All(during, s => Assert.True(s.QueueLength >= rule.MinQueueLength, $"the scrape at {s.At:HH:mm:ss.fff} carried a queue of {s.QueueLength} while the pool starved"));
    }
}
