using System.Data.Common;
using System.Diagnostics;
using System.Globalization;
using DiagnosticScenarios.Scenarios.Sql.Tds;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Options;
using Npgsql;

namespace DiagnosticScenarios.Scenarios.Sql;

/// <summary>
/// The configured database as plain ADO.NET: a connection factory and the provider's "wait this long" statement,
/// so the scenario shapes are written once over <see cref="DbConnection"/> and <see cref="DbCommand"/>.
/// </summary>
public sealed class SqlScenarioDatabase(IOptions<DatabaseOptions> options, IConfiguration configuration, IServiceProvider services)
{
    /// <summary>
    /// Above the demo's 120–125 concurrent requests. At the drivers' default of 100, a load of 125 measures the
    /// connection pool (requests queue for a connection) instead of the threads.
    /// </summary>
    public const int MaxPoolSize = 200;

    /// <summary>A database that is down answers 503 within this, not after the drivers' default 15 s.</summary>
    public const int ConnectTimeoutSeconds = 5;

    // Beyond the WAITFOR itself: the command timeout must never fire before the longest allowed delay ends.
    private const int CommandTimeoutMarginSeconds = 30;

    // PublicationOnly: a failure is not cached, so a fixed configuration takes effect without a restart.
    private readonly Lazy<string> _connectionString = new(() => BuildConnectionString(options.Value.Provider, configuration, services), LazyThreadSafetyMode.PublicationOnly);

    public DatabaseProvider Provider => options.Value.Provider;

    /// <summary>The connection string in use, with the pool size and connect timeout this app relies on.</summary>
    public string ConnectionString => _connectionString.Value;

    /// <summary>A new, closed connection for the configured provider.</summary>
    /// <exception cref="DatabaseConfigurationException">The connection string is missing or does not parse.</exception>
    public DbConnection CreateConnection()
    {
        try
        {
            return Provider == DatabaseProvider.PostgreSql
                ? new NpgsqlConnection(ConnectionString)
                : new SqlConnection(ConnectionString);
        }
        catch (ArgumentException e)
        {
            throw new DatabaseConfigurationException($"ConnectionStrings:{ConfigurationName} is not valid: {e.Message}", e);
        }
    }

    private string ConfigurationName => Provider == DatabaseProvider.PostgreSql ? "PostgreSql" : "SqlServer";

    /// <summary>A command on <paramref name="connection"/> that makes the server wait <paramref name="delay"/> before it answers.</summary>
    public DbCommand CreateDelayCommand(DbConnection connection, TimeSpan delay)
    {
        var command = connection.CreateCommand();
#pragma warning disable CA2100 // the text is built from a validated TimeSpan, never from user text
        command.CommandText = Provider == DatabaseProvider.PostgreSql
            ? string.Create(CultureInfo.InvariantCulture, $"SELECT pg_sleep({delay.TotalSeconds:0.000})")
            : string.Create(CultureInfo.InvariantCulture, $@"WAITFOR DELAY '{delay:hh\:mm\:ss\.fff}'");
#pragma warning restore CA2100
        command.CommandTimeout = (int)Math.Ceiling(delay.TotalSeconds) + CommandTimeoutMarginSeconds;
        return command;
    }

    /// <summary>
    /// Drops idle pooled connections. Called after a database failure: the idle ones point at a server that went
    /// away, and without this each would fail one more request after the database is back.
    /// </summary>
    public void ClearPool()
    {
        using var connection = CreateConnection();
        switch (connection)
        {
            case NpgsqlConnection npgsql:
                NpgsqlConnection.ClearPool(npgsql);
                break;
            case SqlConnection sql:
                SqlConnection.ClearPool(sql);
                break;
        }
    }

    private static string BuildConnectionString(DatabaseProvider provider, IConfiguration configuration, IServiceProvider services)
    {
        switch (provider)
        {
            case DatabaseProvider.Embedded:
                var responder = services.GetRequiredService<TdsResponder>();
                return new SqlConnectionStringBuilder
                {
                    DataSource = $"tcp:127.0.0.1,{responder.Port}",
                    UserID = "scenarios",
                    Password = "scenarios",
                    // The responder speaks TDS without TLS: it answers PRELOGIN with "encryption not supported",
                    // which SqlClient accepts only when the connection string does not ask for encryption.
                    Encrypt = SqlConnectionEncryptOption.Optional,
                    MaxPoolSize = MaxPoolSize,
                    ConnectTimeout = ConnectTimeoutSeconds,
                    // Recovery without a restart: by default a failed open makes the pool fail fast for up to a minute.
                    PoolBlockingPeriod = PoolBlockingPeriod.NeverBlock,
                    ApplicationName = "DiagnosticScenarios",
                }.ConnectionString;
            case DatabaseProvider.SqlServer:
                return WithDefaults(
                    configuration.GetConnectionString("SqlServer")
                        ?? throw new DatabaseConfigurationException("Database:Provider is SqlServer but ConnectionStrings:SqlServer is not set."),
                    (["Max Pool Size", "MaxPoolSize"], MaxPoolSize.ToString(CultureInfo.InvariantCulture)),
                    (["Connect Timeout", "Connection Timeout", "ConnectTimeout", "Timeout"], ConnectTimeoutSeconds.ToString(CultureInfo.InvariantCulture)),
                    (["Pool Blocking Period", "PoolBlockingPeriod"], nameof(PoolBlockingPeriod.NeverBlock)));
            case DatabaseProvider.PostgreSql:
                return WithDefaults(
                    configuration.GetConnectionString("PostgreSql")
                        ?? throw new DatabaseConfigurationException("Database:Provider is PostgreSql but ConnectionStrings:PostgreSql is not set."),
                    (["Maximum Pool Size", "MaxPoolSize"], MaxPoolSize.ToString(CultureInfo.InvariantCulture)),
                    (["Timeout"], ConnectTimeoutSeconds.ToString(CultureInfo.InvariantCulture)));
            default:
                throw new UnreachableException($"Unknown database provider {provider}.");
        }
    }

    /// <summary>Adds each setting the connection string does not name under any of its spellings; explicit values win.</summary>
    private static string WithDefaults(string connectionString, params (string[] Keys, string Value)[] defaults)
    {
        var builder = new DbConnectionStringBuilder { ConnectionString = connectionString };
        foreach (var (keys, value) in defaults)
        {
            if (!keys.Any(builder.ContainsKey))
            {
                builder[keys[0]] = value;
            }
        }

        return builder.ConnectionString;
    }
}
