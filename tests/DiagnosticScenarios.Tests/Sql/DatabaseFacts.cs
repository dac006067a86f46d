namespace DiagnosticScenarios.Tests.Sql;

/// <summary>
/// A test that needs the PostgreSQL of <c>scripts/postgres.sh</c> (<c>POSTGRES_CONNECTION_STRING</c>).
/// Outside CI a missing PostgreSQL is a visible skip; under <c>CI=true</c> the test runs and fails, because CI must test it.
/// </summary>
public sealed class PostgreSqlFactAttribute : FactAttribute
{
    public PostgreSqlFactAttribute()
    {
        if (PostgreSqlEnvironment.ConnectionString is null && !PostgreSqlEnvironment.IsCi)
        {
            Skip = "POSTGRES_CONNECTION_STRING is not set: run eval \"$(scripts/postgres.sh start)\" first.";
        }
    }
}

/// <summary>The data-driven twin of <see cref="PostgreSqlFactAttribute"/>.</summary>
public sealed class PostgreSqlTheoryAttribute : TheoryAttribute
{
    public PostgreSqlTheoryAttribute()
    {
        if (PostgreSqlEnvironment.ConnectionString is null && !PostgreSqlEnvironment.IsCi)
        {
            Skip = "POSTGRES_CONNECTION_STRING is not set: run eval \"$(scripts/postgres.sh start)\" first.";
        }
    }
}

/// <summary>A test against a real SQL Server; visibly skipped unless <c>SQLSERVER_CONNECTION_STRING</c> is set (also in CI).</summary>
public sealed class SqlServerFactAttribute : FactAttribute
{
    public SqlServerFactAttribute()
    {
        if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable("SQLSERVER_CONNECTION_STRING")))
        {
            Skip = "SQLSERVER_CONNECTION_STRING is not set: start one with scripts/sqlserver.sh (needs Docker).";
        }
    }
}

internal static class PostgreSqlEnvironment
{
    public static string? ConnectionString =>
        Environment.GetEnvironmentVariable("POSTGRES_CONNECTION_STRING") is { Length: > 0 } value ? value : null;

    public static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    /// <summary>The connection string, or a failure that says how to get one (only reached under CI or when set).</summary>
    public static string RequireConnectionString() => ConnectionString
        ?? throw new Xunit.Sdk.XunitException("CI=true but POSTGRES_CONNECTION_STRING is not set: .ci/run must start PostgreSQL with scripts/postgres.sh.");
}
