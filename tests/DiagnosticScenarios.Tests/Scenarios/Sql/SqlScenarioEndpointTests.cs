using System.Diagnostics;
using System.Net;
using System.Text.Json;
using DiagnosticScenarios.Scenarios.Sql;
using DiagnosticScenarios.Scenarios.Sql.Tds;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Sql;

/// <summary>The SQL family through the app with its default provider: Embedded, Microsoft.Data.SqlClient against the hosted responder.</summary>
[StartsEarly("one-second queries, and a responder that stays down for seconds: 7–9 s")]
public sealed class SqlScenarioEndpointTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Theory]
    [MemberData(nameof(CatalogueData.SqlShapes), MemberType = typeof(CatalogueData))]
    public async Task SqlScenario_AnswersSuccessAfterTheDelay_WithEmbeddedProvider(string name)
    {
        using var client = _app.CreateClient();
        var started = Stopwatch.StartNew();

        using var response = await client.GetAsync(new Uri($"/api/sqlscenario/{name}?delayMs=200", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal($"success:sql-{name}", await response.Content.ReadAsStringAsync().DefaultTimeout());
        var elapsed = started.Elapsed;
        Assert.True(elapsed >= TimeSpan.FromMilliseconds(195), $"{name} answered after {elapsed.TotalMilliseconds:0} ms, before the 200 ms query could end");
        // The wait for a connection is part of the request, and the 200 ms query is not part of it.
        var connectionWaitMs = long.Parse(Assert.Single(response.Headers.GetValues(SqlScenarioController.ConnectionWaitHeader)), System.Globalization.CultureInfo.InvariantCulture);
        Assert.InRange(connectionWaitMs, 0, (long)elapsed.TotalMilliseconds - 195);
    }

    [Fact]
    public async Task SqlScenario_WaitsOneSecond_WhenDelayMsIsOmitted()
    {
        using var client = _app.CreateClient();
        var responder = _app.Services.GetRequiredService<TdsResponder>();
        var waitforsBefore = responder.WaitforTimings().Count;
        var started = Stopwatch.StartNew();

        using var response = await client.GetAsync(new Uri("/api/sqlscenario/async", UriKind.Relative)).DefaultTimeout();

        // The database was asked for exactly one second, and the answer waited for it.
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var waitfor = Assert.Single(responder.WaitforTimings().Skip(waitforsBefore));
        Assert.Equal(TimeSpan.FromSeconds(1), waitfor.Delay);
        // At least the second, and not a default of several: the margin above is for a machine busy with the other classes.
        Assert.InRange(started.Elapsed, TimeSpan.FromMilliseconds(995), TimeSpan.FromSeconds(4));
    }

    [Fact]
    public async Task SqlScenario_Answers503NamingTheProvider_WhileTheResponderIsDownAndRecoversWhenItIsBack()
    {
        using var client = _app.CreateClient();
        var responder = _app.Services.GetRequiredService<TdsResponder>();
        using var warm = await client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=0", UriKind.Relative)).DefaultTimeout();
        Assert.Equal(HttpStatusCode.OK, warm.StatusCode);

        responder.Stop();
        try
        {
            foreach (var name in new[] { "sync", "async" })
            {
                var started = Stopwatch.StartNew();
                using var down = await client.GetAsync(new Uri($"/api/sqlscenario/{name}?delayMs=0", UriKind.Relative)).DefaultTimeout();

                Assert.Equal(HttpStatusCode.ServiceUnavailable, down.StatusCode);
                Assert.InRange(started.Elapsed, TimeSpan.Zero, TimeSpan.FromSeconds(SqlScenarioDatabase.ConnectTimeoutSeconds + 5));
                using var problem = JsonDocument.Parse(await down.Content.ReadAsStringAsync().DefaultTimeout());
                Assert.Equal("Embedded", problem.RootElement.GetProperty("provider").GetString());
                Assert.False(string.IsNullOrEmpty(problem.RootElement.GetProperty("traceId").GetString()), problem.RootElement.ToString());
                Assert.Contains("Embedded", problem.RootElement.GetProperty("title").GetString(), StringComparison.Ordinal);
                // SqlClient's why: a pooled connection the stop cut, or a new one refused (its inner socket error on Linux
                // reads only "Success").
                Assert.Matches("A transport-level error has occurred|The server was not found or was not accessible", problem.RootElement.GetProperty("detail").GetString());
            }

            using var ping = await client.GetAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();
            Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
        }
        finally
        {
            responder.Start();
        }

        using var back = await client.GetAsync(new Uri("/api/sqlscenario/sync?delayMs=0", UriKind.Relative)).DefaultTimeout();
        Assert.Equal(HttpStatusCode.OK, back.StatusCode);
    }

    [Fact]
    public async Task AsyncScenario_CancelsTheCommandOnTheServer_WhenTheClientDisconnects()
    {
        using var client = _app.CreateClient();
        var responder = _app.Services.GetRequiredService<TdsResponder>();
        var attentionsBefore = responder.AttentionCount;
        using var disconnect = new CancellationTokenSource();
        var request = client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=30000", UriKind.Relative), disconnect.Token);

        // The client leaves only once the WAITFOR runs: leaving on a timer could come while a cold connection pool still logs
        // in, when there is no command yet to cancel.
        await Poll.UntilAsync(() => responder.WaitforsRunning > 0 || request.IsCompleted, TimeSpan.FromSeconds(10));
        var ranBeforeLeaving = responder.WaitforsRunning > 0;
        await disconnect.CancelAsync();
#pragma warning disable VSTHRD003 // deliberate: the request was started by this test, which has no SynchronizationContext
        var error = await Record.ExceptionAsync(() => request.DefaultTimeout());
#pragma warning restore VSTHRD003
        await Poll.UntilAsync(() => responder.AttentionCount > attentionsBefore, TimeSpan.FromSeconds(10));

        Assert.True(ranBeforeLeaving, "The WAITFOR never started, so there was nothing to cancel.");
        Assert.IsAssignableFrom<OperationCanceledException>(error);
        Assert.Equal(attentionsBefore + 1, responder.AttentionCount);
    }
}
