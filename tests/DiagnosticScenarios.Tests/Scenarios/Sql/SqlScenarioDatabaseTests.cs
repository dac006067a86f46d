using DiagnosticScenarios.Scenarios.Sql;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.DependencyInjection;
using Npgsql;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Sql;

/// <summary>The pool must fit the demo's 120–125 connections for every provider, unless a connection string says otherwise.</summary>
public sealed class SqlScenarioDatabaseTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Theory]
    [InlineData("Embedded", null)]
    [InlineData("SqlServer", "Server=tcp:127.0.0.1,1433;User ID=sa;Password=x")]
    public async Task ConnectionString_PoolsTwoHundredWithAFiveSecondConnectTimeout_ForSqlClientProviders(string provider, string? configured)
    {
        await using var withProvider = Configure(provider, "SqlServer", configured);

        var connectionString = new SqlConnectionStringBuilder(withProvider.Services.GetRequiredService<SqlScenarioDatabase>().ConnectionString);

        Assert.Equal(200, connectionString.MaxPoolSize);
        Assert.Equal(5, connectionString.ConnectTimeout);
        Assert.Equal(PoolBlockingPeriod.NeverBlock, connectionString.PoolBlockingPeriod);
    }

    [Fact]
    public async Task ConnectionString_PoolsTwoHundredWithAFiveSecondTimeout_ForPostgreSqlWithoutExplicitValues()
    {
        await using var withProvider = Configure("PostgreSql", "PostgreSql", "Host=127.0.0.1;Username=u;Password=p");

        var connectionString = new NpgsqlConnectionStringBuilder(withProvider.Services.GetRequiredService<SqlScenarioDatabase>().ConnectionString);

        Assert.Equal(200, connectionString.MaxPoolSize);
        Assert.Equal(5, connectionString.Timeout);
    }

    [Fact]
    public async Task ConnectionString_KeepsAnExplicitPoolSize_WhenTheConfiguredStringNamesOne()
    {
        await using var withProvider = Configure("PostgreSql", "PostgreSql", "Host=127.0.0.1;Username=u;Password=p;Maximum Pool Size=7");

        var connectionString = new NpgsqlConnectionStringBuilder(withProvider.Services.GetRequiredService<SqlScenarioDatabase>().ConnectionString);

        Assert.Equal(7, connectionString.MaxPoolSize);
    }

    [Theory]
    [InlineData("PostgreSql", "Host=127.0.0.1;Nonsense=1", "Nonsense")]
    [InlineData("SqlServer", "Server=127.0.0.1;Nonsense=1", "nonsense")]
    public async Task SqlScenario_Answers503NamingTheSetting_WhenTheConnectionStringDoesNotParse(string provider, string configured, string named)
    {
        await using var withProvider = Configure(provider, provider, configured);
        using var client = withProvider.CreateClient();

        using var response = await client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=0", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(System.Net.HttpStatusCode.ServiceUnavailable, response.StatusCode);
        using var problem = System.Text.Json.JsonDocument.Parse(await response.Content.ReadAsStringAsync().DefaultTimeout());
        Assert.Equal(provider, problem.RootElement.GetProperty("provider").GetString());
        var detail = problem.RootElement.GetProperty("detail").GetString();
        Assert.Contains($"ConnectionStrings:{provider}", detail, StringComparison.Ordinal);
        Assert.Contains(named, detail, StringComparison.OrdinalIgnoreCase);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(12)]
    public async Task WarmUpConnections_AreOpenAtTheDatabaseBeforeTheFirstRequest(int warmUp)
    {
        await using var withWarmUp = _app.With(("Database:Provider", "Embedded"), ("Database:WarmUpConnections", warmUp.ToString(System.Globalization.CultureInfo.InvariantCulture)));

        // Resolving a service starts the app; the responder counts the connections SqlClient holds open in its pool.
        var responder = withWarmUp.Services.GetRequiredService<DiagnosticScenarios.Scenarios.Sql.Tds.TdsResponder>();

        Assert.Equal(warmUp, responder.ConnectionCount);
    }

    [Fact]
    public async Task WarmUpConnections_ToADatabaseThatIsDown_LeaveTheAppServing_AndTheScenario503NamingTheDatabase()
    {
        // Port 1 on loopback refuses at once.
        await using var withWarmUp = _app.With(
            ("Database:Provider", "PostgreSql"), ("ConnectionStrings:PostgreSql", "Host=127.0.0.1;Port=1;Username=u;Password=p"), ("Database:WarmUpConnections", "3"));
        using var client = withWarmUp.CreateClient();

        using var ping = await client.GetAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();
        using var scenario = await client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=0", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(System.Net.HttpStatusCode.OK, ping.StatusCode);
        Assert.Equal(System.Net.HttpStatusCode.ServiceUnavailable, scenario.StatusCode);
        using var problem = System.Text.Json.JsonDocument.Parse(await scenario.Content.ReadAsStringAsync().DefaultTimeout());
        Assert.Equal("PostgreSql", problem.RootElement.GetProperty("provider").GetString());
    }

    [Fact]
    public async Task WarmUpConnections_AboveThePoolSize_StopTheAppAtStartNamingTheSetting()
    {
        await using var tooMany = _app.With(("Database:Provider", "Embedded"), ("Database:WarmUpConnections", (SqlScenarioDatabase.MaxPoolSize + 1).ToString(System.Globalization.CultureInfo.InvariantCulture)));

        var error = Assert.ThrowsAny<Exception>(() => tooMany.Services);

        Assert.Contains(nameof(DatabaseOptions.WarmUpConnections), error.ToString(), StringComparison.Ordinal);
    }

    private InProcessApp Configure(string provider, string name, string? connectionString) =>
        connectionString is null
            ? _app.With(("Database:Provider", provider))
            : _app.With(("Database:Provider", provider), ($"ConnectionStrings:{name}", connectionString));
}
