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
/// differences are what the SDK's listening switches on per request: that instrument, and the app's hold time.
/// </summary>
[MemoryDiagnoser]
public class MetricsExportBenchmarks
{
    private WebApplication _app = null!;
    private TestServer _server = null!;

    /// <summary><c>off</c>; <c>on</c>, as the app ships; <c>on, no request duration</c>: <c>MetricsExport:RequestDuration=false</c>.</summary>
    [Params("off", "on", "on, no request duration")]
    public string Export { get; set; } = "off";

    [GlobalSetup]
    public async Task SetupAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseTestServer();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["MetricsExport:Enabled"] = Export == "off" ? "false" : "true",
            ["MetricsExport:RequestDuration"] = Export == "on" ? "true" : "false",
        });
        builder.Services.AddDetection(builder.Configuration);
        builder.Services.AddMetricsExport(builder.Configuration);
        _app = builder.Build();
        _app.UseEndpointAttribution();
        _app.MapGet("/api/diagscenario/ping", () => "success:ping");
        await _app.StartAsync();
        _server = _app.GetTestServer();
    }

    [GlobalCleanup]
    public async Task CleanupAsync() => await _app.DisposeAsync();

    [Benchmark]
    public Task<HttpContext> Ping() => _server.SendAsync(static context => context.Request.Path = "/api/diagscenario/ping");
}
