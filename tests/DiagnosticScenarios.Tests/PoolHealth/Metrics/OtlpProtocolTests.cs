using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.PoolHealth.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using OpenTelemetry.Exporter;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// The OTLP protocol as the app's exporter ends up configured, read from the app's own container where the SDK reads it:
/// HTTP/protobuf unless <c>OTEL_EXPORTER_OTLP_PROTOCOL</c> names one (the .NET exporter's own default, gRPC, sends on the
/// pool it reports on), and the client it sends with over HTTP/protobuf. That the export goes on while the pool starves
/// is <see cref="OtlpExportTests"/>', which sets no protocol.
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

    /// <summary>
    /// The client the exporter sends with over HTTP/protobuf completes its connections' reads on threads of its own, not
    /// the pool's: the one read a synchronous send starts (the connection's idle check, every 15 s) then needs no pool
    /// thread, which a starved app cannot give. An asynchronous request shows it at once, its last read completing the
    /// request; .NET's own client completes that read on a pool thread. Whether the export goes on through a starvation
    /// is <see cref="OtlpExportTests"/>', which does not reliably tell the two clients apart.
    /// </summary>
    [Fact]
    public async Task Exporter_OverHttpProtobuf_SendsWithAClientWhoseReadsCompleteOffThePool()
    {
        using var receiver = new ThreadedHttpServer("otlp-receiver", new OffPoolLimits { MaxConnections = 4, MaxStreams = 0 }, exchange =>
        {
            // A fixed interval the physics needs: the read must wait for the answer, as the idle check's does, so the
            // answer comes well after the client started reading (one that came first would complete the read at once,
            // on whatever thread asked). On the receiver's own thread, not the pool.
            Thread.Sleep(TimeSpan.FromMilliseconds(500));
            exchange.Respond(200, "application/x-protobuf", "");
        });
        receiver.Start(0);
        using var exporting = _app.With([("OTEL_EXPORTER_OTLP_ENDPOINT", $"http://127.0.0.1:{receiver.Port}")]);
        var options = exporting.Services.GetRequiredService<IOptionsMonitor<OtlpExporterOptions>>().Get(MetricsExportRegistration.OtlpExporterName);
        using var client = options.HttpClientFactory();

        // Runs on the thread that completed the request, which is the thread that completed its last read.
        var completedOnPool = await client.GetAsync(new Uri($"http://127.0.0.1:{receiver.Port}/v1/metrics"))
            .ContinueWith(request =>
            {
                using var response = request.GetAwaiter().GetResult();
                return Thread.CurrentThread.IsThreadPoolThread;
            }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default)
            .DefaultTimeout();

        Assert.False(completedOnPool, "the exporter's client completed its read on a pool thread");
    }
}
