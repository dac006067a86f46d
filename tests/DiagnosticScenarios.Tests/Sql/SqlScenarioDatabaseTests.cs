using DiagnosticScenarios.Sql;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.DependencyInjection;
using Npgsql;

namespace DiagnosticScenarios.Tests.Sql;

/// <summary>The pool must fit the demo's 120–125 connections for every provider, unless a connection string says otherwise.</summary>
public sealed class SqlScenarioDatabaseTests
{
    [Theory]
    [InlineData("Embedded", null)]
    [InlineData("SqlServer", "Server=tcp:127.0.0.1,1433;User ID=sa;Password=x")]
    public async Task ConnectionString_PoolsTwoHundredWithAFiveSecondConnectTimeout_ForSqlClientProviders(string provider, string? configured)
    {
        await using var factory = Configure(provider, "SqlServer", configured);

        var connectionString = new SqlConnectionStringBuilder(factory.Services.GetRequiredService<SqlScenarioDatabase>().ConnectionString);

        Assert.Equal(SqlScenarioDatabase.MaxPoolSize, connectionString.MaxPoolSize);
        Assert.Equal(SqlScenarioDatabase.ConnectTimeoutSeconds, connectionString.ConnectTimeout);
        Assert.Equal(PoolBlockingPeriod.NeverBlock, connectionString.PoolBlockingPeriod);
        Assert.True(SqlScenarioDatabase.MaxPoolSize >= 125);
    }

    [Fact]
    public async Task ConnectionString_PoolsTwoHundredWithAFiveSecondTimeout_ForPostgreSqlWithoutExplicitValues()
    {
        await using var factory = Configure("PostgreSql", "PostgreSql", "Host=127.0.0.1;Username=u;Password=p");

        var connectionString = new NpgsqlConnectionStringBuilder(factory.Services.GetRequiredService<SqlScenarioDatabase>().ConnectionString);

        Assert.Equal(SqlScenarioDatabase.MaxPoolSize, connectionString.MaxPoolSize);
        Assert.Equal(SqlScenarioDatabase.ConnectTimeoutSeconds, connectionString.Timeout);
    }

    [Fact]
    public async Task ConnectionString_KeepsAnExplicitPoolSize_WhenTheConfiguredStringNamesOne()
    {
        await using var factory = Configure("PostgreSql", "PostgreSql", "Host=127.0.0.1;Username=u;Password=p;Maximum Pool Size=7");

        var connectionString = new NpgsqlConnectionStringBuilder(factory.Services.GetRequiredService<SqlScenarioDatabase>().ConnectionString);

        Assert.Equal(7, connectionString.MaxPoolSize);
    }

    private static WebApplicationFactory<Program> Configure(string provider, string name, string? connectionString) =>
        new WebApplicationFactory<Program>().WithWebHostBuilder(b =>
        {
            b.UseSetting("Database:Provider", provider);
            if (connectionString is not null)
            {
                b.UseSetting($"ConnectionStrings:{name}", connectionString);
            }
        });
}
