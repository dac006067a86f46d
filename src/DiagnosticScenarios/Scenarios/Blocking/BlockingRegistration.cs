using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.Scenarios.Mock;

namespace DiagnosticScenarios.Scenarios.Blocking;

public static class BlockingRegistration
{
    /// <summary>
    /// What the blocking family's pairs use: the mock database (the lock, semaphore and intermittent pairs query it, so this
    /// registers the mock scenarios first, <c>AddScenarios</c>), the slow upstream and its client, the background worker, the
    /// settings store and its factory.
    /// </summary>
    public static IServiceCollection AddBlockingScenarios(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddScenarios(configuration);
        services.AddOffPoolLimits(configuration);
        services.AddSingleton<SlowUpstream>();
        services.AddHostedService<SlowUpstreamService>();
        services.AddHttpClient(SlowUpstream.ClientName, (provider, client) => client.BaseAddress = provider.GetRequiredService<SlowUpstream>().BaseAddress)
            // The upstream drops a connection idle for 10 s; the client lets go of it first.
            .ConfigurePrimaryHttpMessageHandler(() => new SocketsHttpHandler { PooledConnectionIdleTimeout = TimeSpan.FromSeconds(5) })
            // A log line per call, hundreds a second under load, would be the load.
            .RemoveAllLoggers();
        services.AddScoped<UpstreamUnavailableFilter>();
        services.AddSingleton<BackgroundWorker>();
        services.AddTenantSettings();
        return services;
    }

    /// <summary>Starts the slow upstream with the app, before the server takes requests.</summary>
    private sealed class SlowUpstreamService(SlowUpstream upstream) : IHostedService
    {
        public Task StartAsync(CancellationToken cancellationToken)
        {
            upstream.Start();
            return Task.CompletedTask;
        }

        public Task StopAsync(CancellationToken cancellationToken)
        {
            upstream.Dispose();
            return Task.CompletedTask;
        }
    }
}
