using System.ComponentModel.DataAnnotations;

namespace DiagnosticScenarios.Scenarios.Sql;

/// <summary>Which database the SQL scenarios run against (configuration section <c>Database</c>).</summary>
public sealed class DatabaseOptions
{
    public const string SectionName = "Database";

    /// <summary><c>Embedded</c> (default, zero set-up), <c>SqlServer</c> or <c>PostgreSql</c>.</summary>
    public DatabaseProvider Provider { get; set; } = DatabaseProvider.Embedded;

    /// <summary>
    /// Connections opened at start-up and returned to the driver's pool, before the server takes requests (0, the
    /// default: none). The drivers open connections only when a request needs one, so a cold connection pool adds the
    /// database's connection set-up to the first requests of a load (a PostgreSQL backend takes tens of milliseconds to
    /// start on a small VM, one after the other): a load measurement that is about threads seeds the pool first, the
    /// same for every shape. A database that is down at start-up is logged, not fatal.
    /// </summary>
    [Range(0, SqlScenarioDatabase.MaxPoolSize)]
    public int WarmUpConnections { get; set; }
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
