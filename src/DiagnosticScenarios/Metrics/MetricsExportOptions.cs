namespace DiagnosticScenarios.Metrics;

/// <summary>Configuration section <c>MetricsExport</c>: the metrics export (Prometheus scrape and OTLP).</summary>
public sealed class MetricsExportOptions
{
    public const string SectionName = "MetricsExport";

    /// <summary>The OpenTelemetry setting that turns the OTLP export on, read as the SDK reads it (environment or configuration).</summary>
    public const string OtlpEndpointKey = "OTEL_EXPORTER_OTLP_ENDPOINT";

    /// <summary>The standard setting that names the service in both exports.</summary>
    public const string ServiceNameKey = "OTEL_SERVICE_NAME";

    /// <summary>
    /// Off removes the OpenTelemetry SDK, the scrape and the OTLP export, so their cost can be measured; the export is off
    /// with <c>ThreadPoolHealth:Enabled</c> too.
    /// </summary>
    public bool Enabled { get; set; } = true;

    public static bool IsEnabled(IConfiguration configuration) =>
        configuration.GetValue(SectionName + ":" + nameof(Enabled), defaultValue: true);
}
