using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.PoolHealth.Detection;

public static class DetectionRegistration
{
    /// <summary>
    /// The queue-delay probe, the injection listener, the attribution, the meter, the detector (<see cref="HealthSampler"/>)
    /// and its starvation warning; nothing when <c>ThreadPoolHealth:Enabled</c> is false. Features that act on starvation
    /// register an <see cref="IStarvationListener"/>, and call this first: once registered, it is not registered again.
    /// </summary>
    public static IServiceCollection AddDetection(this IServiceCollection services, IConfiguration configuration)
    {
        if (services.Any(s => s.ServiceType == typeof(HealthSampler)))
        {
            return services;
        }

        services.AddOptions<ThreadPoolHealthOptions>()
            .Bind(configuration.GetSection(ThreadPoolHealthOptions.SectionName))
            .ValidateDataAnnotations()
            .ValidateOnStart();
        if (!ThreadPoolHealthOptions.IsEnabled(configuration))
        {
            return services;
        }

        services.AddMetrics();
        services.AddSingleton<HealthMetrics>();
        services.AddSingleton<EndpointAttribution>();
        services.AddSingleton<QueueDelayProbe>();

        // Handed over as an instance, so the container never disposes it (see ThreadInjectionListener).
        services.AddSingleton(new ThreadInjectionListener());
        services.AddSingleton<IPoolCounters, RuntimePoolCounters>();
        services.AddSingleton<IStarvationListener, StarvationLog>();
        services.AddSingleton<HealthSampler>();
        services.AddHostedService(provider => provider.GetRequiredService<HealthSampler>());
        return services;
    }

    /// <summary>Per-endpoint figures and hold time for every routed request after this point.</summary>
    public static IApplicationBuilder UseEndpointAttribution(this IApplicationBuilder app) =>
        app.ApplicationServices.GetRequiredService<IOptions<ThreadPoolHealthOptions>>().Value.Enabled
            ? app.UseMiddleware<EndpointAttributionMiddleware>()
            : app;
}
