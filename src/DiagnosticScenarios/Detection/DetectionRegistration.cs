using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Detection;

public static class DetectionRegistration
{
    /// <summary>The queue-delay probe, the injection listener, the attribution, the meter and the sampler; nothing when <c>ThreadPoolHealth:Enabled</c> is false.</summary>
    public static IServiceCollection AddDetection(this IServiceCollection services, IConfiguration configuration)
    {
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
        services.AddSingleton<StarvationLog>();
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
