using System.Runtime.CompilerServices;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>A test that runs Debian's Prometheus server or its promtool.</summary>
public sealed class PrometheusFactAttribute : FactAttribute
{
    public const string Install = "needs prometheus and promtool on PATH: apt-get install prometheus";

    public PrometheusFactAttribute([CallerMemberName] string test = "") =>
        Requirements.SkipUnless(this, PrometheusTools.Server is not null && PrometheusTools.Promtool is not null, Install, test);
}

/// <summary>A theory that runs Debian's promtool.</summary>
public sealed class PrometheusTheoryAttribute : TheoryAttribute
{
    public PrometheusTheoryAttribute([CallerMemberName] string test = "") =>
        Requirements.SkipUnless(this, PrometheusTools.Server is not null && PrometheusTools.Promtool is not null, PrometheusFactAttribute.Install, test);
}

internal static class PrometheusTools
{
    public static string? Server => Requirements.OnPath("prometheus");

    public static string? Promtool => Requirements.OnPath("promtool");
}
