using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.Scenarios.Sql;
using OpenTelemetry.Exporter;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;

namespace DiagnosticScenarios.PoolHealth.Metrics;

public static class MetricsExportRegistration
{
    private const string ServiceName = "DiagnosticScenarios";

    /// <summary>The name of the OTLP exporter's options (named, so the protocol set here goes through the options pipeline, where the SDK and a reader find it).</summary>
    public const string OtlpExporterName = "DiagnosticScenarios";

    /// <summary>The meters exported: the runtime's (thread pool, CPU, GC), ASP.NET Core's request duration, and the app's own.</summary>
    public static IReadOnlyList<string> Meters { get; } = ["System.Runtime", "Microsoft.AspNetCore.Hosting", HealthMetrics.MeterName, SqlScenarioMetrics.MeterName];

    /// <summary>
    /// OpenTelemetry's SDK over <see cref="Meters"/>: a Prometheus scrape (<see cref="PrometheusScrape"/>, served by the
    /// live page's server at <c>/metrics</c>), and OTLP when <c>OTEL_EXPORTER_OTLP_ENDPOINT</c> is set (the exporter reads
    /// the standard <c>OTEL_*</c> settings itself). Nothing when <c>ThreadPoolHealth:Enabled</c> or <c>MetricsExport:Enabled</c>
    /// is false.
    /// </summary>
    public static IServiceCollection AddMetricsExport(this IServiceCollection services, IConfiguration configuration)
    {
        if (!ThreadPoolHealthOptions.IsEnabled(configuration) || !MetricsExportOptions.IsEnabled(configuration))
        {
            return services;
        }

        var scrape = new PrometheusScrape();
        services.AddSingleton(scrape);
        services.AddOpenTelemetry()
            .ConfigureResource(resource =>
            {
                // The SDK would name it unknown_service:dotnet; OTEL_SERVICE_NAME, when set, names it instead.
                if (string.IsNullOrEmpty(configuration[MetricsExportOptions.ServiceNameKey]))
                {
                    resource.AddService(ServiceName);
                }
            })
            .WithMetrics(metrics =>
            {
                // ASP.NET Core's meter for its request duration alone: its active-request count costs two more
                // recordings on every request and says nothing the app's own holding gauge does not.
                metrics.AddMeter([.. Meters]).AddView("http.server.active_requests", MetricStreamConfiguration.Drop).AddReader(scrape.Reader);
                if (!MetricsExportOptions.IsRequestDurationEnabled(configuration))
                {
                    // Dropped, the instrument has no listener, so ASP.NET Core does not record it at all.
                    metrics.AddView(MetricsExportOptions.RequestDurationInstrument, MetricStreamConfiguration.Drop);
                }

                if (!string.IsNullOrEmpty(configuration[MetricsExportOptions.OtlpEndpointKey]))
                {
                    // Named options: the SDK registers this step in the options pipeline, after the OTEL_* settings.
                    metrics.AddOtlpExporter(OtlpExporterName, exporter =>
                    {
                        exporter.Protocol = OtlpProtocol(configuration) ?? exporter.Protocol;

                        // Over HTTP/protobuf the reader's synchronous sends on a kept-alive connection need no pool thread.
                        if (exporter.Protocol == OtlpExportProtocol.HttpProtobuf)
                        {
                            exporter.HttpClientFactory = () => OtlpHttpClient.Create(TimeSpan.FromMilliseconds(exporter.TimeoutMilliseconds));
                        }
                    });
                }
            });
        return services;
    }

    /// <summary>
    /// The OTLP protocol the app sets: HTTP/protobuf (the OpenTelemetry specification's default) when
    /// <c>OTEL_EXPORTER_OTLP_PROTOCOL</c> names none, instead of the .NET exporter's gRPC, which sends on the thread pool
    /// and so stalls while the pool starves; null when the setting names one, which the exporter then reads itself.
    /// </summary>
    public static OtlpExportProtocol? OtlpProtocol(IConfiguration configuration) =>
        string.IsNullOrEmpty(configuration[MetricsExportOptions.OtlpProtocolKey]) ? OtlpExportProtocol.HttpProtobuf : null;
}
