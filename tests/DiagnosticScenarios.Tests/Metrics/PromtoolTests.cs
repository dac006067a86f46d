using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Metrics;

/// <summary>The shipped rules and scrape configuration as Prometheus's own tool reads them.</summary>
public sealed class PromtoolTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [PrometheusFact]
    public async Task Promtool_AcceptsTheAlertRulesAndTheScrapeConfig()
    {
        var rules = await PromtoolAsync("check", "rules", MonitoringFiles.AlertRules);
        var config = await PromtoolAsync("check", "config", MonitoringFiles.ScrapeConfig);

        Assert.True(rules.ExitCode == 0, rules.ToString());
        Assert.True(config.ExitCode == 0, config.ToString());
    }

    [PrometheusFact]
    public async Task AlertRuleUnitTests_Pass_UnderPromtool()
    {
        var result = await PromtoolAsync("test", "rules", MonitoringFiles.AlertRuleTests);

        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains("SUCCESS", result.Output + result.Error, StringComparison.Ordinal);
    }

    private static Task<ChildProcessResult> PromtoolAsync(params string[] arguments) =>
        ChildProcess.RunAsync(new ChildProcessStart(PrometheusTools.Promtool ?? "promtool", arguments) { WorkingDirectory = MonitoringFiles.Folder }, Timeout)
            .TimeoutAfter(Timeout + TimeSpan.FromSeconds(5));
}
