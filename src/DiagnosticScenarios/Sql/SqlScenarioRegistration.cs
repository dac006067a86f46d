using DiagnosticScenarios.Sql.Tds;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Sql;

public static class SqlScenarioRegistration
{
    /// <summary>The SQL scenarios' database (<c>Database:Provider</c>), and the embedded TDS responder when that is the provider.</summary>
    public static IServiceCollection AddSqlScenarios(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddOptions<DatabaseOptions>()
            .Bind(configuration.GetSection(DatabaseOptions.SectionName))
            .ValidateOnStart();

        services.AddSingleton<TdsResponder>();
        services.AddSingleton<SqlScenarioDatabase>();
        services.AddSingleton<SqlScenarioMetrics>();
        services.AddScoped<DatabaseUnavailableFilter>();
        services.AddHostedService<EmbeddedResponderService>();
        return services;
    }

    /// <summary>Starts the responder with the app, before the server takes requests, when the provider is Embedded.</summary>
    private sealed class EmbeddedResponderService(TdsResponder responder, IOptions<DatabaseOptions> options) : IHostedService
    {
        public Task StartAsync(CancellationToken cancellationToken)
        {
            if (options.Value.Provider == DatabaseProvider.Embedded)
            {
                responder.Start();
            }

            return Task.CompletedTask;
        }

        public Task StopAsync(CancellationToken cancellationToken)
        {
            responder.Stop();
            return Task.CompletedTask;
        }
    }
}
