using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc.Testing;

namespace DiagnosticScenarios.Tests.Sql;

/// <summary>The app with <c>Database:Provider=PostgreSql</c> against the PostgreSQL of <c>scripts/postgres.sh</c>.</summary>
public sealed class PostgreSqlAppFactory : WebApplicationFactory<Program>
{
    protected override void ConfigureWebHost(IWebHostBuilder builder)
    {
        builder.UseSetting("Database:Provider", "PostgreSql");
        if (PostgreSqlEnvironment.ConnectionString is { } connectionString)
        {
            builder.UseSetting("ConnectionStrings:PostgreSql", connectionString);
        }
    }
}

/// <summary>Runs <c>scripts/postgres.sh</c> from the repository, bounded in time.</summary>
internal static class PostgresScript
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);

    public static async Task RunAsync(string verb)
    {
        var script = Path.Combine(RepositoryPaths.Root, "scripts", "postgres.sh");
        var result = await ChildProcess.RunAsync(script, [verb], Timeout);
        if (result.ExitCode != 0)
        {
            throw new InvalidOperationException(result.ToString());
        }
    }
}

/// <summary>Tests that stop and restart the shared PostgreSQL must not overlap with any other test that uses it.</summary>
[CollectionDefinition(Name)]
public sealed class PostgreSqlTestGroup : ICollectionFixture<PostgreSqlAppFactory>
{
    public const string Name = "PostgreSql";
}
