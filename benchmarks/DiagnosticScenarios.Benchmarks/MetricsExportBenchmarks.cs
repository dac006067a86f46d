using System.Diagnostics.Metrics;
using BenchmarkDotNet.Attributes;
using DiagnosticScenarios.Detection;
using DiagnosticScenarios.Metrics;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.Configuration;

namespace DiagnosticScenarios.Benchmarks;

/// <summary>
/// What the metrics export adds to one request, without the machine's noise: a ping through ASP.NET Core's hosting
/// (in memory, TestServer, so its request-duration instrument records as Kestrel's requests do) and the attribution, with
/// the export off, on, and on without ASP.NET Core's <c>http.server.request.duration</c> (the switches the app reads). The
/// differences are what the SDK's listening switches on per request: that instrument, and the app's hold time. A fourth
/// side listens to that instrument alone with a <see cref="MeterListener"/> that does nothing with what it hears: what
/// ASP.NET Core itself pays once anything listens, before any SDK aggregates a measurement.
/// </summary>
[MemoryDiagnoser]
public class MetricsExportBenchmarks : IDisposable
{
    private WebApplication _app = null!;
    private TestServer _server = null!;
    private readonly MeterListener _listener = new();

    /// <summary>
    /// <c>off</c>; <c>on</c>, as the app ships; <c>on, no request duration</c>: <c>MetricsExport:RequestDuration=false</c>;
    /// <c>bare listener</c>: the export off, and a listener that enables the request duration and ignores it.
    /// </summary>
    [Params("off", "on", "on, no request duration", "bare listener")]
    public string Export { get; set; } = "off";

    [GlobalSetup]
    public async Task SetupAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseTestServer();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["MetricsExport:Enabled"] = Export is "off" or "bare listener" ? "false" : "true",
            ["MetricsExport:RequestDuration"] = Export == "on" ? "true" : "false",
        });
        builder.Services.AddDetection(builder.Configuration);
        builder.Services.AddMetricsExport(builder.Configuration);
        _app = builder.Build();
        if (Export == "bare listener")
        {
            _listener.InstrumentPublished = static (instrument, listener) =>
            {
                if (instrument.Name == MetricsExportOptions.RequestDurationInstrument)
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<double>(static (_, _, _, _) => { });
            _listener.Start();
        }

        _app.UseEndpointAttribution();
        _app.MapGet("/api/diagscenario/ping", () => "success:ping");
        await _app.StartAsync();
        _server = _app.GetTestServer();
    }

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        _listener.Dispose();
        await _app.DisposeAsync();
    }

    [Benchmark]
    public Task<HttpContext> Ping() => _server.SendAsync(static context => context.Request.Path = "/api/diagscenario/ping");

    public void Dispose()
    {
        _listener.Dispose();
        GC.SuppressFinalize(this);
    }
}
