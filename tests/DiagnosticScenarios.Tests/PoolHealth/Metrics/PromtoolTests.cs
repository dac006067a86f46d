using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>The shipped rules and scrape configuration as Prometheus's own tool reads them.</summary>
public sealed class PromtoolTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [PrometheusFact]
    public async Task Promtool_AcceptsTheAlertRulesAndTheScrapeConfig()
    {
        var rules = await PromtoolAsync("check", "rules", MonitoringFiles.AlertRules, MonitoringFiles.AlertRules15s);
        var config = await PromtoolAsync("check", "config", MonitoringFiles.ScrapeConfig);

        Assert.True(rules.ExitCode == 0, rules.ToString());
        Assert.True(config.ExitCode == 0, config.ToString());
    }

    [PrometheusTheory]
    [InlineData("alerts.test.yml")]
    [InlineData("alerts-15s.test.yml")]
    public async Task AlertRuleUnitTests_Pass_UnderPromtool(string tests)
    {
        var result = await PromtoolAsync("test", "rules", Path.Combine(MonitoringFiles.Folder, tests));

        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains("SUCCESS", result.Output + result.Error, StringComparison.Ordinal);
    }

    private static Task<ChildProcessResult> PromtoolAsync(params string[] arguments) =>
        ChildProcess.RunAsync(new ChildProcessStart(PrometheusTools.Promtool ?? "promtool", arguments) { WorkingDirectory = MonitoringFiles.Folder }, Timeout)
            .TimeoutAfter(Timeout + TimeSpan.FromSeconds(5));
}
