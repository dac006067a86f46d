using System.Diagnostics;
using System.Diagnostics.Metrics;
using BenchmarkDotNet.Attributes;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.PoolHealth.Metrics;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry.Metrics;

namespace DiagnosticScenarios.Benchmarks;

/// <summary>
/// What the export's SDK does with one request's measurements, alone, without a server around it to add its noise: a
/// recording of <c>http.server.request.duration</c> with the five tags ASP.NET Core gives a ping, on a meter of ASP.NET
/// Core's name with its buckets, and of the app's hold time with its route tag, with the export configured as the app
/// configures it (<c>MetricsExport:Enabled</c> true) and not (false: nothing listens, and each recording returns at once).
/// On one thread, and on two threads at once, as a saturated server's two cores record a ping's measurements into the
/// same data points.
/// </summary>
[MemoryDiagnoser]
public class MetricsRecordingBenchmarks : IDisposable
{
    private const int PerThread = 100_000;

    private static readonly KeyValuePair<string, object?> Route = new("http.route", "/api/diagscenario/ping");
    private static readonly object Ok = 200;

    private ServiceProvider _services = null!;
    private Histogram<double> _requestDuration = null!;
    private HealthMetrics _health = null!;

    [Params(false, true)]
    public bool Exported { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var configuration = new ConfigurationBuilder()
            .AddInMemoryCollection(new Dictionary<string, string?> { ["MetricsExport:Enabled"] = Exported ? "true" : "false" })
            .Build();
        _services = new ServiceCollection()
            .AddLogging()
            .AddDetection(configuration)
            .AddMetricsExport(configuration)
            .BuildServiceProvider();
        // A host would start the SDK; without one, asking for it does.
        _ = _services.GetService<MeterProvider>();
        _requestDuration = _services.GetRequiredService<IMeterFactory>().Create("Microsoft.AspNetCore.Hosting").CreateHistogram(
            MetricsExportOptions.RequestDurationInstrument,
            "s",
            "Duration of HTTP server requests.",
            tags: null,
            new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] });
        _health = _services.GetRequiredService<HealthMetrics>();
        if (_requestDuration.Enabled != Exported)
        {
            throw new InvalidOperationException($"The request duration is {(_requestDuration.Enabled ? "" : "not ")}listened to with the export {(Exported ? "on" : "off")}.");
        }
    }

    [Benchmark(OperationsPerInvoke = PerThread)]
    public void OneThread() => Requests();

    // Reported per request and thread: the CPU one request's recordings cost is twice the time shown.
    [Benchmark(OperationsPerInvoke = 2 * PerThread)]
    public void TwoThreads() => Parallel.Invoke(Requests, Requests);

    private void Requests()
    {
        for (var i = 0; i < PerThread; i++)
        {
            OneRequest();
        }
    }

    private void OneRequest()
    {
        var tags = new TagList
        {
            { "url.scheme", "http" },
            { "http.request.method", "GET" },
            { "network.protocol.version", "1.1" },
            Route,
            { "http.response.status_code", Ok },
        };
        _requestDuration.Record(0.0004, tags);
        _health.RecordHoldTime(Route, 0.05);
    }

    [GlobalCleanup]
    public void Cleanup() => _services.Dispose();

    public void Dispose()
    {
        _services?.Dispose();
        GC.SuppressFinalize(this);
    }
}
