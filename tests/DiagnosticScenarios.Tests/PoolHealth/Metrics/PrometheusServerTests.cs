using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.PoolHealth.LivePage;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>A real Prometheus, configured from the shipped files, scraping the live page of the app in the test host.</summary>
[StartsEarly("a real Prometheus scraping a server until the series are there: 8–10 s")]
public sealed class PrometheusServerTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    [PrometheusFact]
    public async Task Prometheus_ReadsBackTheAlertsInputsAndRecordedRules_FromTheLivePagesScrape()
    {
        var port = _app.Services.GetRequiredService<LivePageServer>().Port!.Value;
        await using var prometheus = await PrometheusServer.StartAsync(new Uri($"http://127.0.0.1:{port}/"), PrometheusWatch.Interval);

        // The recorded rules need two scrapes (rate()); the inputs are there from the first.
        var read = new Dictionary<string, double>();
        string[] wanted = [.. StarvationRulePrometheus.InputMetrics, StarvationRulePrometheus.CompletedPerSecond, StarvationRulePrometheus.QueuedSecondsOfWork, StarvationRulePrometheus.CpuPercent];
        async Task<int> ReadTheMissingAsync()
        {
            foreach (var metric in wanted.Where(m => !read.ContainsKey(m)))
            {
                var result = await prometheus.QueryAsync($"sum({metric})");
                if (result.GetArrayLength() == 1)
                {
                    read[metric] = double.Parse(result[0].GetProperty("value")[1].GetString()!, CultureInfo.InvariantCulture);
                }
            }

            return read.Count;
        }

        await Poll.UntilAsync(ReadTheMissingAsync, count => count == wanted.Length, Patience, interval: PrometheusWatch.Interval / 2);

        var summary = string.Join(", ", read.Select(r => $"{r.Key} {r.Value}"));
        Assert.True(read.Count == wanted.Length, $"Prometheus read back only {summary}\n{prometheus.Output}");
        // The values are the scrape's, of a test host that runs other tests beside this one; what the recorded rules make of
        // given inputs is promtool's to check (monitoring/alerts.test.yml). The processor count is the one value known here.
        Assert.True(read[StarvationRulePrometheus.CpuCount] == Environment.ProcessorCount, summary);
    }
}
