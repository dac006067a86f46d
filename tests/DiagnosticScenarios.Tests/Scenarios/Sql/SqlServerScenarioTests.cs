using System.Diagnostics;
using System.Net;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Sql;

/// <summary>
/// The SQL family against a real SQL Server (<c>scripts/sqlserver.sh</c>, Docker). Skipped, visibly, unless
/// <c>SQLSERVER_CONNECTION_STRING</c> is set: no SQL Server runs in CI.
/// </summary>
public sealed class SqlServerScenarioTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [SqlServerFact]
    public async Task SqlScenario_EveryShapeAnswersSuccessAfterTheDelay_WithSqlServerProvider()
    {
        await using var sqlServer = _app.With(("Database:Provider", "SqlServer"), ("ConnectionStrings:SqlServer", Environment.GetEnvironmentVariable("SQLSERVER_CONNECTION_STRING")!));
        using var client = sqlServer.CreateClient();

        foreach (var name in new[] { "sync", "asyncsyncio", "taskrun", "wait", "async" })
        {
            var started = Stopwatch.StartNew();
            using var response = await client.GetAsync(new Uri($"/api/sqlscenario/{name}?delayMs=200", UriKind.Relative)).DefaultTimeout();

            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Equal($"success:sql-{name}", await response.Content.ReadAsStringAsync().DefaultTimeout());
            Assert.True(started.Elapsed >= TimeSpan.FromMilliseconds(195), $"{name} answered after {started.ElapsedMilliseconds} ms, before the 200 ms query could end");
        }
    }
}
