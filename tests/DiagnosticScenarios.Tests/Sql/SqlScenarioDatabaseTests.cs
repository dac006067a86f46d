using DiagnosticScenarios.Sql;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.DependencyInjection;
using Npgsql;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Sql;

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

    private InProcessApp Configure(string provider, string name, string? connectionString) =>
        connectionString is null
            ? _app.With(("Database:Provider", provider))
            : _app.With(("Database:Provider", provider), ($"ConnectionStrings:{name}", connectionString));
}
