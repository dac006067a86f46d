using System.Diagnostics;
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
        using var process = Process.Start(new ProcessStartInfo(script, verb)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        }) ?? throw new InvalidOperationException($"Could not start {script}.");
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync().WaitAsync(Timeout);
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"scripts/postgres.sh {verb} exited with {process.ExitCode}: {await error}{await output}");
        }
    }
}

/// <summary>Tests that stop and restart the shared PostgreSQL must not overlap with any other test that uses it.</summary>
[CollectionDefinition(Name)]
public sealed class PostgreSqlTestGroup : ICollectionFixture<PostgreSqlAppFactory>
{
    public const string Name = "PostgreSql";
}
