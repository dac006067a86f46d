using DiagnosticScenarios.PoolHealth.LivePage;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry.Metrics;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// The app writes its scrape itself (OpenTelemetry's Prometheus exporter queues each collection to the thread pool, so it
/// cannot answer while the pool starves), in the exporter's own names, so the shipped alert rules read the same series
/// whichever of the two a reader scrapes: checked here against the exporter on the same meter provider. The provider
/// listens to its meters by name, so it also reads the in-process apps of other tests: it runs alone, after them (another
/// test's series could otherwise appear in one scrape and not the other).
/// </summary>
[Collection(ProcessWideStateCollection.Name)]
public sealed class ExporterCompatibilityTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task Scrape_NamesEverySeriesAsOpenTelemetrysPrometheusExporterDoes()
    {
        using var app = _app.WithWebHostBuilder(builder =>
            builder.ConfigureServices(services => services.ConfigureOpenTelemetryMeterProvider(metrics => metrics.AddPrometheusExporter())));
        using var client = app.CreateClient();
        (await client.GetAsync(new Uri($"/{RequestedRoute}?delayMs=0", UriKind.Relative)).DefaultTimeout()).EnsureSuccessStatusCode();
        // An unmatched route: its series carries a boolean tag (aspnetcore.request.is_unhandled), written true/false.
        using (var notFound = await client.GetAsync(new Uri("/no-such-route", UriKind.Relative)).DefaultTimeout())
        {
            Assert.Equal(System.Net.HttpStatusCode.NotFound, notFound.StatusCode);
        }

        var port = app.Services.GetRequiredService<LivePageServer>().Port!.Value;
        using var livePage = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}/"), Timeout = TimeoutExtensions.Default };
        var exporter = new ApplicationBuilder(app.Services).UseOpenTelemetryPrometheusScrapingEndpoint(_ => true).Build();

        // Ours before and after theirs: a series appears when its instrument first records (the queue-delay probe's may do so
        // between two scrapes). So a series of theirs must be ours before or after, and a series ours had both before and after
        // must be theirs.
        var oursBefore = Series(await livePage.GetStringAsync(new Uri("metrics", UriKind.Relative)).DefaultTimeout());
        var theirs = Series(await ScrapeAsync(exporter, app.Services));
        var oursAfter = Series(await livePage.GetStringAsync(new Uri("metrics", UriKind.Relative)).DefaultTimeout());

        var onlyTheirs = theirs.Except(oursBefore.Union(oursAfter, StringComparer.Ordinal), StringComparer.Ordinal).ToList();
        var onlyOurs = oursBefore.Intersect(oursAfter, StringComparer.Ordinal).Except(theirs, StringComparer.Ordinal).ToList();
        Assert.NotEmpty(theirs);
        Assert.Contains(theirs, series => series.Contains(RequestedRoute, StringComparison.Ordinal));
        Assert.True(onlyTheirs.Count == 0 && onlyOurs.Count == 0,
            $"only the exporter's:\n{string.Join('\n', onlyTheirs)}\nonly ours:\n{string.Join('\n', onlyOurs)}\n({theirs.Count} series against our {oursBefore.Count} before and {oursAfter.Count} after)");
    }

    // Each series' name and labels, its value left out: the two scrapes are two collections a moment apart. A series of
    // another route is left out too: the other tests' apps, run before this one, may have left per-route series behind in
    // either scrape. The routes this test requests, and every series without a route, are compared.
    private static List<string> Series(string text) =>
        [.. text.Split('\n')
            .Where(l => l.Length > 0 && !l.StartsWith('#') && !l.StartsWith("target_info", StringComparison.Ordinal))
            .Select(l => l[..l.LastIndexOf(' ')])
            .Where(series => !series.Contains("http_route=\"", StringComparison.Ordinal) || series.Contains(RequestedRoute + "\"", StringComparison.Ordinal))];

    // The only route this test requests that has one (the other request matches none).
    private const string RequestedRoute = "api/diagscenario/taskasyncwait";

    private static async Task<string> ScrapeAsync(RequestDelegate exporter, IServiceProvider services)
    {
        var context = new DefaultHttpContext { RequestServices = services };
        using var body = new MemoryStream();
        context.Response.Body = body;
        await exporter(context).DefaultTimeout();
        return System.Text.Encoding.UTF8.GetString(body.ToArray());
    }
}
