namespace DiagnosticScenarios.Tests.Scenarios.Sql;

/// <summary>The in-process app with <c>Database:Provider=PostgreSql</c> against the PostgreSQL the tests use.</summary>
public sealed class PostgreSqlApp() : InProcessApp(Settings())
{
    // Without PostgreSQL every test of the collection is a visible skip, and nothing may start a cluster.
    private static (string Key, string Value)[] Settings() => PostgreSqlEnvironment.IsAvailable
        ? [("Database:Provider", "PostgreSql"), ("ConnectionStrings:PostgreSql", PostgreSqlEnvironment.RequireConnectionString())]
        : [("Database:Provider", "PostgreSql")];
}

/// <summary>Tests that stop and restart the shared PostgreSQL must not overlap with any other test that uses it.</summary>
[CollectionDefinition(Name)]
public sealed class PostgreSqlTestGroup : ICollectionFixture<PostgreSqlApp>
{
    public const string Name = "PostgreSql";
}
