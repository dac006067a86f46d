namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>The repository's Prometheus files (monitoring/).</summary>
internal static class MonitoringFiles
{
    public static string Folder { get; } = Path.Combine(RepositoryPaths.Root, "monitoring");

    /// <summary>The scrape configuration people run.</summary>
    public static string ScrapeConfig { get; } = Path.Combine(Folder, "prometheus.yml");

    /// <summary>Generated from the starvation rule.</summary>
    public static string AlertRules { get; } = Path.Combine(Folder, "alerts.yml");

    /// <summary>promtool's unit tests of the alert rules.</summary>
    public static string AlertRuleTests { get; } = Path.Combine(Folder, "alerts.test.yml");

    /// <summary>Generated from the starvation rule for a 15 s scrape.</summary>
    public static string AlertRules15s { get; } = Path.Combine(Folder, "alerts-15s.yml");
}
