using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc.Testing;

namespace DiagnosticScenarios.Tests.Sql;

/// <summary>The app with <c>Database:Provider=PostgreSql</c> against the PostgreSQL the tests use.</summary>
public sealed class PostgreSqlAppFactory : WebApplicationFactory<Program>
{
    protected override void ConfigureWebHost(IWebHostBuilder builder)
    {
        builder.UseSetting("Database:Provider", "PostgreSql");
        if (PostgreSqlEnvironment.IsAvailable)
        {
            builder.UseSetting("ConnectionStrings:PostgreSql", PostgreSqlEnvironment.RequireConnectionString());
        }
    }
}

/// <summary>Tests that stop and restart the shared PostgreSQL must not overlap with any other test that uses it.</summary>
[CollectionDefinition(Name)]
public sealed class PostgreSqlTestGroup : ICollectionFixture<PostgreSqlAppFactory>
{
    public const string Name = "PostgreSql";
}
