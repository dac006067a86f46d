namespace DiagnosticScenarios.PoolHealth.Metrics;

/// <summary>Configuration section <c>MetricsExport</c>: the metrics export (Prometheus scrape and OTLP).</summary>
public sealed class MetricsExportOptions
{
    public const string SectionName = "MetricsExport";

    /// <summary>The OpenTelemetry setting that turns the OTLP export on, read as the SDK reads it (environment or configuration).</summary>
    public const string OtlpEndpointKey = "OTEL_EXPORTER_OTLP_ENDPOINT";

    /// <summary>The standard setting that names the OTLP protocol (<c>grpc</c>, <c>http/protobuf</c>).</summary>
    public const string OtlpProtocolKey = "OTEL_EXPORTER_OTLP_PROTOCOL";

    /// <summary>The standard setting that names the service in both exports.</summary>
    public const string ServiceNameKey = "OTEL_SERVICE_NAME";

    /// <summary>
    /// Off removes the OpenTelemetry SDK, the scrape and the OTLP export, so their cost can be measured; the export is off
    /// with <c>ThreadPoolHealth:Enabled</c> too.
    /// </summary>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// ASP.NET Core's <c>http.server.request.duration</c> in the export. Listened to, ASP.NET Core records it on every
    /// request, whoever listens: most of what the export costs a request that does nothing at saturation, and the export stays
    /// within its budget only without it (docs/benchmarks.md, "What the metrics export costs"). Off drops it alone; the
    /// pool's, the process's and the app's instruments, which the alert reads, stay.
    /// </summary>
    public bool RequestDuration { get; set; } = true;

    /// <summary>ASP.NET Core's instrument that <see cref="RequestDuration"/> turns off.</summary>
    public const string RequestDurationInstrument = "http.server.request.duration";

    /// <summary><see cref="Enabled"/> read before the options are built, to decide what to register; its default the property's.</summary>
    public static bool IsEnabled(IConfiguration configuration) =>
        configuration.GetValue(SectionName + ":" + nameof(Enabled), new MetricsExportOptions().Enabled);

    /// <summary><see cref="RequestDuration"/> read the same way.</summary>
    public static bool IsRequestDurationEnabled(IConfiguration configuration) =>
        configuration.GetValue(SectionName + ":" + nameof(RequestDuration), new MetricsExportOptions().RequestDuration);
}
