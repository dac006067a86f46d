namespace DiagnosticScenarios.Sql;

/// <summary>Which database the SQL scenarios run against (configuration section <c>Database</c>).</summary>
public sealed class DatabaseOptions
{
    public const string SectionName = "Database";

    /// <summary><c>Embedded</c> (default, zero set-up), <c>SqlServer</c> or <c>PostgreSql</c>.</summary>
    public DatabaseProvider Provider { get; set; } = DatabaseProvider.Embedded;
}

/// <summary>The database behind <c>/api/sqlscenario</c>.</summary>
public enum DatabaseProvider
{
    /// <summary>Microsoft.Data.SqlClient against the TDS responder the app hosts on loopback.</summary>
    Embedded,

    /// <summary>Microsoft.Data.SqlClient against <c>ConnectionStrings:SqlServer</c>.</summary>
    SqlServer,

    /// <summary>Npgsql against <c>ConnectionStrings:PostgreSql</c>.</summary>
    PostgreSql,
}
