using System.Net;
using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.PoolHealth.LivePage;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// The Prometheus scrape at the live page's <c>/metrics</c>. What it holds is read from an app in a process of its own:
/// in the test host, the meter provider of one app listens to every app's meters by name, counts an instrument of another
/// app as the same stream as its own, and drops the stream when that app is disposed, so its own series can go missing.
/// </summary>
public sealed class ScrapeEndpointTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task Scrape_HasTheAlertsInputsTheAppsMeterAndRequestDurations_OnTheLivePagesServer()
    {
        await using var server = await HealthApp.StartAsync();
        using var app = server.CreateClient();
        (await app.GetAsync(new Uri("api/diagscenario/taskasyncwait?delayMs=0", UriKind.Relative)).DefaultTimeout()).EnsureSuccessStatusCode();
        using var livePage = await server.LivePageClientAsync();

        // The queue-delay histogram is in the scrape once the probe, on its own interval, has measured once, and the
        // request's duration once ASP.NET Core's hosting has recorded it, when the request ends, which may be after the
        // client has its answer: on a busy machine either can come after the app answers its first request.
        var (_, text) = await Poll.UntilAsync(
            () => livePage.GetStringAsync(new Uri("/metrics", UriKind.Relative)),
            t => t.Contains("# TYPE diagnosticscenarios_threadpool_queue_delay_milliseconds histogram", StringComparison.Ordinal)
                && t.Contains("http_route=\"api/diagscenario/taskasyncwait\"", StringComparison.Ordinal),
            TimeoutExtensions.Default);
        using var response = await livePage.GetAsync(new Uri("/metrics", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain; version=0.0.4; charset=utf-8", response.Content.Headers.ContentType?.ToString());
        var series = text.Split('\n').Where(l => l.Length > 0 && !l.StartsWith('#')).ToList();
        foreach (var input in StarvationRulePrometheus.InputMetrics)
        {
            Assert.Contains(series, s => s.StartsWith(input + "{otel_scope_name=\"System.Runtime\"", StringComparison.Ordinal));
        }

        Assert.Contains("# TYPE diagnosticscenarios_threadpool_queue_delay_milliseconds histogram", text, StringComparison.Ordinal);
        Assert.Contains(series, s => s.StartsWith("diagnosticscenarios_threadpool_injections_total{otel_scope_name=\"DiagnosticScenarios\",reason=\"cooperative_blocking\"} ", StringComparison.Ordinal));
        Assert.Contains(series, s => s.StartsWith("http_server_request_duration_seconds_bucket{", StringComparison.Ordinal)
            && s.Contains("http_route=\"api/diagscenario/taskasyncwait\"", StringComparison.Ordinal) && s.Contains("le=\"+Inf\"} ", StringComparison.Ordinal));
        Assert.Contains(series, s => s.StartsWith("target_info{", StringComparison.Ordinal) && s.Contains("service_name=\"DiagnosticScenarios\"", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Scrape_RefusesAForeignHost_AndSendsNoCorsHeader()
    {
        using var livePage = LivePageClient(_app);
        using var foreign = new HttpRequestMessage(HttpMethod.Get, "/metrics") { Headers = { Host = "attacker.example" } };
        using var fromAPage = new HttpRequestMessage(HttpMethod.Get, "/metrics") { Headers = { { "Origin", "http://attacker.example" } } };

        using var refused = await livePage.SendAsync(foreign).DefaultTimeout();
        using var answered = await livePage.SendAsync(fromAPage).DefaultTimeout();

        Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
        Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
        using var problem = JsonDocument.Parse(await refused.Content.ReadAsStringAsync().DefaultTimeout());
        Assert.Equal("allowed-hosts", problem.RootElement.GetProperty("rule").GetString());
        Assert.Equal(HttpStatusCode.OK, answered.StatusCode);
        Assert.DoesNotContain(answered.Headers, h => h.Key.StartsWith("Access-Control-", StringComparison.OrdinalIgnoreCase));
    }

    [Fact]
    public async Task Scrape_HasNoRequestDurations_ButTheAlertsInputs_WhenRequestDurationIsOff()
    {
        await using var server = await HealthApp.StartAsync(new Dictionary<string, string> { ["MetricsExport__RequestDuration"] = "false" });
        using var app = server.CreateClient();
        (await app.GetAsync(new Uri("api/diagscenario/taskasyncwait?delayMs=0", UriKind.Relative)).DefaultTimeout()).EnsureSuccessStatusCode();
        using var livePage = await server.LivePageClientAsync();

        // The hold time is recorded as the request ends, which may be after the client has its answer.
        var (_, text) = await Poll.UntilAsync(
            () => livePage.GetStringAsync(new Uri("/metrics", UriKind.Relative)),
            t => t.Contains("diagnosticscenarios_http_server_thread_hold_time", StringComparison.Ordinal),
            TimeoutExtensions.Default);

        Assert.DoesNotContain("http_server_request_duration", text, StringComparison.Ordinal);
        Assert.All(StarvationRulePrometheus.InputMetrics, input => Assert.Contains(input + "{", text, StringComparison.Ordinal));
        Assert.Contains("diagnosticscenarios_http_server_thread_hold_time", text, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Scrape_IsNotFound_WhenTheExportIsOff()
    {
        using var off = _app.With(("MetricsExport:Enabled", "false"));
        using var livePage = LivePageClient(off);

        using var response = await livePage.GetAsync(new Uri("/metrics", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
    }

    private static HttpClient LivePageClient(WebApplicationFactory<Program> app)
    {
        var port = app.Services.GetRequiredService<LivePageServer>().Port ?? throw new InvalidOperationException("The live page's server is not listening.");
        return new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}/"), Timeout = TimeoutExtensions.Default };
    }
}
