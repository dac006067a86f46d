using System.Collections.Concurrent;
using System.Data.Common;
using System.Diagnostics;
using System.Net.Sockets;
using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.Scenarios.Sql.Tds;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Scenarios.Sql;

public static partial class SqlScenarioRegistration
{
    /// <summary>The SQL scenarios' database (<c>Database:Provider</c>), and the embedded TDS responder when that is the provider.</summary>
    public static IServiceCollection AddSqlScenarios(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddOptions<DatabaseOptions>()
            .Bind(configuration.GetSection(DatabaseOptions.SectionName))
            .ValidateDataAnnotations()
            .ValidateOnStart();

        // Its sessions keep room for the app's own SqlClient pool; its WAITFORs' lateness goes to the app's metrics.
        services.AddOffPoolLimits(configuration);
        services.AddOptions<OffPoolOptions>().Validate(o => o.Tds.MaxConnections > SqlScenarioDatabase.MaxPoolSize,
            $"{OffPoolOptions.SectionName}:{nameof(OffPoolOptions.Tds)}:{nameof(OffPoolLimits.MaxConnections)} must be above the SqlClient pool's {SqlScenarioDatabase.MaxPoolSize}, so the app's own pool always fits.");
        services.AddSingleton(provider =>
        {
            var metrics = provider.GetRequiredService<SqlScenarioMetrics>();
            return new TdsResponder(provider.GetRequiredService<ILogger<TdsResponder>>(), provider.GetRequiredService<IOptions<OffPoolOptions>>().Value.Tds,
                waitfor => metrics.RecordWaitforLateness(waitfor.Lateness));
        });
        services.AddSingleton<SqlScenarioDatabase>();
        services.AddSingleton<SqlScenarioMetrics>();
        services.AddScoped<DatabaseUnavailableFilter>();
        services.AddHostedService<EmbeddedResponderService>();
        return services;
    }

    /// <summary>
    /// Starts the responder with the app, before the server takes requests, when the provider is Embedded; then opens
    /// <see cref="DatabaseOptions.WarmUpConnections"/> connections, a few at a time, and returns them to the pool.
    /// </summary>
    private sealed partial class EmbeddedResponderService(TdsResponder responder, SqlScenarioDatabase database, IOptions<DatabaseOptions> options, ILogger<EmbeddedResponderService> logger) : IHostedService
    {
        // Opens in flight at once: enough to overlap the database's set-up of each, few enough that the start-up holds
        // only a handful of pool threads and the pool the load meets is still cold.
        private const int WarmUpParallelism = 4;

        public async Task StartAsync(CancellationToken cancellationToken)
        {
            if (options.Value.Provider == DatabaseProvider.Embedded)
            {
                responder.Start();
            }

            if (options.Value.WarmUpConnections > 0)
            {
                await WarmUpAsync(options.Value.WarmUpConnections, cancellationToken);
            }
        }

        public Task StopAsync(CancellationToken cancellationToken)
        {
            responder.Stop();
            return Task.CompletedTask;
        }

        private async Task WarmUpAsync(int count, CancellationToken cancellationToken)
        {
            var clock = Stopwatch.StartNew();
            var open = new ConcurrentBag<DbConnection>();
            try
            {
                // Every connection stays open until all are: closed early, one would be handed out again instead of a new one.
                await Parallel.ForEachAsync(Enumerable.Range(0, count), new ParallelOptions { MaxDegreeOfParallelism = WarmUpParallelism, CancellationToken = cancellationToken }, async (_, ct) =>
                {
                    var connection = database.CreateConnection();
                    open.Add(connection);
                    await connection.OpenAsync(ct);
                });
                LogWarmedUp(logger, count, database.Provider, clock.ElapsedMilliseconds);
            }
            catch (Exception e) when (e is DbException or DatabaseConfigurationException or TimeoutException or InvalidOperationException or SocketException)
            {
                // The scenarios answer 503 naming the database while it is down; the rest of the app serves as usual.
                LogWarmUpFailed(logger, e, count, database.Provider, e.Message);
            }
            finally
            {
                foreach (var connection in open)
                {
                    await connection.DisposeAsync();
                }
            }
        }

        [LoggerMessage(EventId = 5515, Level = LogLevel.Information, Message = "Opened {Count} {Provider} connections for the pool in {ElapsedMs} ms (Database:WarmUpConnections)")]
        private static partial void LogWarmedUp(ILogger logger, int count, DatabaseProvider provider, long elapsedMs);

        [LoggerMessage(EventId = 5516, Level = LogLevel.Warning, Message = "Could not open the {Count} {Provider} connections of Database:WarmUpConnections: {Reason}; the SQL scenarios answer 503 until the database is reachable")]
        private static partial void LogWarmUpFailed(ILogger logger, Exception exception, int count, DatabaseProvider provider, string reason);
    }
}
