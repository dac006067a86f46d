using DiagnosticScenarios.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using OpenTelemetry.Exporter;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Metrics;

/// <summary>
/// The OTLP protocol as the app's exporter ends up configured, read from the app's own container where the SDK reads it:
/// HTTP/protobuf unless <c>OTEL_EXPORTER_OTLP_PROTOCOL</c> names one (the .NET exporter's own default, gRPC, sends on the
/// pool it reports on). That HTTP/protobuf export goes on while the pool starves is <see cref="OtlpExportTests"/>', which
/// sets no protocol.
/// </summary>
public sealed class OtlpProtocolTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Theory]
    [InlineData(null, OtlpExportProtocol.HttpProtobuf)]
    [InlineData("grpc", OtlpExportProtocol.Grpc)]
    [InlineData("http/protobuf", OtlpExportProtocol.HttpProtobuf)]
    public void Exporter_UsesHttpProtobuf_UnlessTheStandardSettingNamesAProtocol(string? setting, OtlpExportProtocol expected)
    {
        (string, string)[] settings = setting is null
            ? [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]
            : [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"), ("OTEL_EXPORTER_OTLP_PROTOCOL", setting)];
        using var exporting = _app.With(settings);

        var options = exporting.Services.GetRequiredService<IOptionsMonitor<OtlpExporterOptions>>().Get(MetricsExportRegistration.OtlpExporterName);

        Assert.Equal(expected, options.Protocol);
    }
}
