using BenchmarkDotNet.Attributes;
using DiagnosticScenarios.PoolHealth.Detection;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Routing.Patterns;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

namespace DiagnosticScenarios.Benchmarks;

/// <summary>
/// What the detection adds to one request: the same pipeline (attribution, then an endpoint that answers at once, as
/// <c>ping</c> does) built with <c>ThreadPoolHealth:Enabled</c> true and false, the switch the app itself reads. On one
/// thread, and on two threads at once on the same endpoint, where cores would contend for shared counters.
/// </summary>
[MemoryDiagnoser]
public class AttributionBenchmarks
{
    private const int PerThread = 100_000;

    private RequestDelegate _pipeline = null!;
    private HttpContext[] _contexts = null!;

    [Params(false, true)]
    public bool Enabled { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var configuration = new ConfigurationBuilder()
            .AddInMemoryCollection(new Dictionary<string, string?> { ["ThreadPoolHealth:Enabled"] = Enabled ? "true" : "false" })
            .Build();
        var services = new ServiceCollection()
            .AddLogging()
            .AddDetection(configuration)
            .BuildServiceProvider();
        var app = new ApplicationBuilder(services);
        app.UseEndpointAttribution();
        app.Run(static _ => Task.CompletedTask);
        _pipeline = app.Build();

        var endpoint = new RouteEndpoint(static _ => Task.CompletedTask, RoutePatternFactory.Parse("api/diagscenario/ping"), 0, EndpointMetadataCollection.Empty, "ping");
        _contexts = [NewContext(endpoint), NewContext(endpoint)];
    }

    [Benchmark(OperationsPerInvoke = PerThread)]
    public void OneThread() => Requests(_contexts[0]);

    [Benchmark(OperationsPerInvoke = 2 * PerThread)]
    public void TwoThreads() => Parallel.Invoke(() => Requests(_contexts[0]), () => Requests(_contexts[1]));

    private static DefaultHttpContext NewContext(Endpoint endpoint)
    {
        var context = new DefaultHttpContext();
        context.SetEndpoint(endpoint);
        return context;
    }

    private void Requests(HttpContext context)
    {
        for (var i = 0; i < PerThread; i++)
        {
            var request = _pipeline(context);
            if (!request.IsCompletedSuccessfully)
            {
                throw new InvalidOperationException("The pipeline was meant to complete at once, as ping does.");
            }
        }
    }
}
