using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>The shipped alert is the starvation rule: a change to the rule or its durations must regenerate the file.</summary>
public sealed class AlertRulesFileTests
{
    /// <summary>Set to 1 (never under CI) to write the rendered rules over the committed file instead of failing.</summary>
    private const string WriteVariable = "DIAGNOSTICSCENARIOS_WRITE_ALERTS";

    public static TheoryData<string, string> Files => new()
    {
        { "alerts.yml", nameof(PrometheusRuleDurations.Shipped) },
        { "alerts-15s.yml", nameof(PrometheusRuleDurations.FifteenSecondScrape) },
    };

    [Theory]
    [MemberData(nameof(Files))]
    public void CommittedAlertRules_AreWhatTheStarvationRuleRenders_WithTheirDurations(string file, string durationsName)
    {
        var durations = durationsName == nameof(PrometheusRuleDurations.Shipped) ? PrometheusRuleDurations.Shipped : PrometheusRuleDurations.FifteenSecondScrape;
        var rendered = StarvationRule.Default.ToPrometheusRules(durations);
        var path = Path.Combine(MonitoringFiles.Folder, file);
        if (Environment.GetEnvironmentVariable(WriteVariable) == "1" && !Requirements.IsCi)
        {
            File.WriteAllText(path, rendered);
        }

        Assert.True(File.ReadAllText(path).ReplaceLineEndings("\n") == rendered,
            $"{path} is not what StarvationRule.Default.ToPrometheusRules(PrometheusRuleDurations.{durationsName}) renders; rewrite it with "
            + $"`{WriteVariable}=1 dotnet test --filter {nameof(AlertRulesFileTests)}` and commit it. Rendered:\n{rendered}");
    }

    /// <summary>The shipped rules are written for a scrape and an evaluation a second; the shipped scrape configuration must give them that.</summary>
    [Fact]
    public void ShippedScrapeConfig_ScrapesAndEvaluatesAtTheIntervalTheShippedRulesAreWrittenFor()
    {
        var interval = PrometheusServer.Duration(PrometheusRuleDurations.Shipped.ScrapeInterval);

        Assert.Equal([interval, interval, interval], PrometheusServer.ShippedIntervals());
    }
}
