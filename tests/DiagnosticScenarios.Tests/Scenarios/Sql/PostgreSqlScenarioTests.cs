using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Scenarios.Sql;
using Microsoft.Extensions.DependencyInjection;
using Npgsql;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Sql;

/// <summary>The SQL family against a real PostgreSQL with Npgsql (<c>SELECT pg_sleep(...)</c>), including its outages.</summary>
[Collection(PostgreSqlTestGroup.Name)]
public sealed class PostgreSqlScenarioTests(PostgreSqlApp app, ITestOutputHelper output)
{
    private readonly InProcessApp _app = app.LogTo(output);

    [PostgreSqlTheory]
    [InlineData("sync")]
    [InlineData("asyncsyncio")]
    [InlineData("taskrun")]
    [InlineData("wait")]
    [InlineData("async")]
    public async Task SqlScenario_AnswersSuccessAfterTheDelay_WithPostgreSqlProvider(string name)
    {
        PostgreSqlEnvironment.RequireConnectionString();
        using var client = _app.CreateClient();
        var started = Stopwatch.StartNew();

        using var response = await client.GetAsync(new Uri($"/api/sqlscenario/{name}?delayMs=200", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal($"success:sql-{name}", await response.Content.ReadAsStringAsync().DefaultTimeout());
        Assert.True(started.Elapsed >= TimeSpan.FromMilliseconds(195), $"{name} answered after {started.ElapsedMilliseconds} ms, before the 200 ms query could end");
        Assert.Single(response.Headers.GetValues(SqlScenarioController.ConnectionWaitHeader));
    }

    [PostgreSqlFact]
    public async Task PostgreSql_AcceptsMoreConnectionsThanThePool_AndThePoolFitsTheDemoLoad()
    {
        await using var connection = new NpgsqlConnection(PostgreSqlEnvironment.RequireConnectionString());
        await connection.OpenAsync().DefaultTimeout();
        await using var command = new NpgsqlCommand("SHOW max_connections", connection);

        var maxConnections = int.Parse((string)(await command.ExecuteScalarAsync().DefaultTimeout())!, CultureInfo.InvariantCulture);

        var poolSize = new NpgsqlConnectionStringBuilder(_app.Services.GetRequiredService<SqlScenarioDatabase>().ConnectionString).MaxPoolSize;
        Assert.InRange(poolSize, 125, int.MaxValue);
        Assert.True(maxConnections > poolSize, $"max_connections {maxConnections} must exceed the pool size {poolSize}.");
    }

    [PostgreSqlFact]
    public async Task SqlScenario_Answers503NamingThePostgreSqlCause_WhileItIsStoppedAndRecoversWhenItStarts()
    {
        PostgreSqlEnvironment.RequireConnectionString();
        using var client = _app.CreateClient();
        using var warm = await client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=0", UriKind.Relative)).DefaultTimeout();
        Assert.Equal(HttpStatusCode.OK, warm.StatusCode);

        await PostgresScript.RunAsync("stop").TimeoutAfter(TimeSpan.FromSeconds(120));
        try
        {
            foreach (var name in new[] { "sync", "async", "wait" })
            {
                var started = Stopwatch.StartNew();
                using var down = await client.GetAsync(new Uri($"/api/sqlscenario/{name}?delayMs=0", UriKind.Relative)).DefaultTimeout();

                Assert.Equal(HttpStatusCode.ServiceUnavailable, down.StatusCode);
                Assert.InRange(started.Elapsed, TimeSpan.Zero, TimeSpan.FromSeconds(SqlScenarioDatabase.ConnectTimeoutSeconds + 5));
                using var problem = JsonDocument.Parse(await down.Content.ReadAsStringAsync().DefaultTimeout());
                Assert.Equal("PostgreSql", problem.RootElement.GetProperty("provider").GetString());
                // The cause: the server's own message for the pooled connection its stop cut, then the refusal, from the
                // innermost exception (the driver's own message names only the address).
                Assert.Matches("57P01: terminating connection|Connection refused", problem.RootElement.GetProperty("detail").GetString());
            }

            using var ping = await client.GetAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();
            Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
        }
        finally
        {
            await PostgresScript.RunAsync("start").TimeoutAfter(TimeSpan.FromSeconds(120));
        }

        foreach (var name in new[] { "sync", "async" })
        {
            using var back = await client.GetAsync(new Uri($"/api/sqlscenario/{name}?delayMs=0", UriKind.Relative)).DefaultTimeout();
            Assert.Equal(HttpStatusCode.OK, back.StatusCode);
        }
    }

    [PostgreSqlFact]
    public async Task SqlScenario_Answers503WithTheServerMessage_WhenThePasswordIsWrong()
    {
        var wrong = new NpgsqlConnectionStringBuilder(PostgreSqlEnvironment.RequireConnectionString()) { Password = "not-the-password" };
        await using var misconfigured = _app.With(("ConnectionStrings:PostgreSql", wrong.ConnectionString));
        using var client = misconfigured.CreateClient();

        using var response = await client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=0", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        using var problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync().DefaultTimeout());
        Assert.Contains("password authentication failed", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [PostgreSqlFact]
    public async Task SqlScenario_Answers503NamingTheRefusal_WhenNothingListensOnThePort()
    {
        var unreachable = new NpgsqlConnectionStringBuilder(PostgreSqlEnvironment.RequireConnectionString()) { Port = FreeLoopbackPort.Pick() };
        await using var misconfigured = _app.With(("ConnectionStrings:PostgreSql", unreachable.ConnectionString));
        using var client = misconfigured.CreateClient();
        var started = Stopwatch.StartNew();

        using var response = await client.GetAsync(new Uri("/api/sqlscenario/sync?delayMs=0", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        // A refused connection is known at once; the connect timeout is for a server that does not answer (below).
        Assert.InRange(started.Elapsed, TimeSpan.Zero, TimeSpan.FromSeconds(SqlScenarioDatabase.ConnectTimeoutSeconds));
        using var problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync().DefaultTimeout());
        Assert.Equal("PostgreSql", problem.RootElement.GetProperty("provider").GetString());
        Assert.Contains("Connection refused", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [PostgreSqlFact]
    public async Task SqlScenario_Answers503AtTheConnectTimeout_WhenTheServerAcceptsAndNeverAnswers()
    {
        // A listener that takes the connection and never says a word: a database host that hangs, not one that is down.
        using var silent = new TcpListener(IPAddress.Loopback, 0);
        silent.Start();
        var port = ((IPEndPoint)silent.LocalEndpoint).Port;
        var unanswered = new NpgsqlConnectionStringBuilder(PostgreSqlEnvironment.RequireConnectionString()) { Port = port };
        await using var hanging = _app.With(("ConnectionStrings:PostgreSql", unanswered.ConnectionString));
        using var client = hanging.CreateClient();
        var started = Stopwatch.StartNew();

        using var response = await client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=0", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        // The connection string's 5 s, no less (the driver gave up on its own clock) and not much more (no retry after it).
        Assert.InRange(started.Elapsed, TimeSpan.FromSeconds(4.5), TimeSpan.FromSeconds(10));
        using var problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync().DefaultTimeout());
        Assert.Equal("PostgreSql", problem.RootElement.GetProperty("provider").GetString());
        // Npgsql words it "Timeout during connection attempt", "The operation has timed out" or, when the timeout falls while
        // it waits for the server's first answer, "Exception while reading from stream: Timeout during reading attempt",
        // from run to run.
        Assert.Matches("Timeout during connection attempt|Timeout during reading attempt|The operation has timed out", problem.RootElement.GetProperty("detail").GetString());
    }

    [PostgreSqlFact]
    public async Task AsyncScenario_CancelsPgSleepOnTheServer_WhenTheClientDisconnects()
    {
        var connectionString = PostgreSqlEnvironment.RequireConnectionString();
        using var client = _app.CreateClient();
        using var disconnect = new CancellationTokenSource();
        var request = client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=30000", UriKind.Relative), disconnect.Token);

        // The client leaves only once pg_sleep runs: leaving on a timer could come while a cold pool still logs in, and then
        // no pg_sleep would be running afterwards with nothing having been cancelled on the server.
        var (_, sleepingBeforeLeaving) = await Poll.UntilAsync(
            () => CountActiveSleepsAsync(connectionString, "pg_sleep(30.000)"), sleeping => sleeping > 0 || request.IsCompleted, TimeSpan.FromSeconds(10));
        await disconnect.CancelAsync();
#pragma warning disable VSTHRD003 // deliberate: the request was started by this test, which has no SynchronizationContext
        var error = await Record.ExceptionAsync(() => request.DefaultTimeout());
#pragma warning restore VSTHRD003
        var (_, sleepingAfterwards) = await Poll.UntilAsync(
            () => CountActiveSleepsAsync(connectionString, "pg_sleep(30.000)"), sleeping => sleeping == 0, TimeSpan.FromSeconds(10));

        Assert.True(sleepingBeforeLeaving == 1, $"{sleepingBeforeLeaving} pg_sleep(30) running before the client left; expected the request's one.");
        Assert.IsAssignableFrom<OperationCanceledException>(error);
        Assert.Equal(0, sleepingAfterwards);
    }

    [PostgreSqlFact]
    public async Task ConnectionWaitHeader_ShowsTheTimeSpentWaitingForThePool_WhenThePoolIsTooSmall()
    {
        var onePooled = new NpgsqlConnectionStringBuilder(PostgreSqlEnvironment.RequireConnectionString()) { MaxPoolSize = 1 };
        await using var small = _app.With(("ConnectionStrings:PostgreSql", onePooled.ConnectionString));
        using var client = small.CreateClient();
        using var warm = await client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=0", UriKind.Relative)).DefaultTimeout();

        // The second waits for the first's query to end: 1000 ms less the gap between their starts, which the test host's
        // pool, busy with the parallel test classes, can widen; half the query is left for that gap.
        var both = await Task.WhenAll(
            client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=1000", UriKind.Relative)),
            client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=1000", UriKind.Relative))).DefaultTimeout();

        var waits = both.Select(r => long.Parse(r.Headers.GetValues(SqlScenarioController.ConnectionWaitHeader).Single(), CultureInfo.InvariantCulture)).Order().ToList();
        Assert.All(both, r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        Assert.InRange(waits[0], 0, 300);
        Assert.InRange(waits[1], 500, 30_000);
        foreach (var response in both)
        {
            response.Dispose();
        }
    }

    private static async Task<long> CountActiveSleepsAsync(string connectionString, string text)
    {
        await using var connection = new NpgsqlConnection(new NpgsqlConnectionStringBuilder(connectionString) { Pooling = false }.ConnectionString);
        await connection.OpenAsync().DefaultTimeout();
        await using var command = new NpgsqlCommand("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%' || @text || '%' AND pid <> pg_backend_pid()", connection);
        command.Parameters.AddWithValue("text", text);
        return (long)(await command.ExecuteScalarAsync().DefaultTimeout())!;
    }
}
