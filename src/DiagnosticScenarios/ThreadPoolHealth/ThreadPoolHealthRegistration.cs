using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.ThreadPoolHealth;

public static class ThreadPoolHealthRegistration
{
    /// <summary>The detector (probe, injection listener, sampler), the attribution, the meter and the load launcher; nothing when <c>ThreadPoolHealth:Enabled</c> is false.</summary>
    public static IServiceCollection AddThreadPoolHealth(this IServiceCollection services, IConfiguration configuration)
    {
        var section = configuration.GetSection(ThreadPoolHealthOptions.SectionName);
        services.AddOptions<ThreadPoolHealthOptions>().Bind(section).ValidateDataAnnotations().ValidateOnStart();
        if (!IsEnabled(configuration))
        {
            return services;
        }

        services.AddMetrics();
        services.AddSingleton<HealthMetrics>();
        services.AddSingleton<EndpointAttribution>();
        services.AddSingleton<ThreadPoolMonitor>();
        services.AddHostedService(provider => provider.GetRequiredService<ThreadPoolMonitor>());
        services.AddSingleton<LoadRunLauncher>();
        return services;
    }

    /// <summary>Per-endpoint figures and hold time for every routed request after this point.</summary>
    public static IApplicationBuilder UseEndpointAttribution(this IApplicationBuilder app) =>
        app.ApplicationServices.GetRequiredService<IOptions<ThreadPoolHealthOptions>>().Value.Enabled
            ? app.UseMiddleware<EndpointAttributionMiddleware>()
            : app;

    /// <summary>The live page at <c>/</c> and, when enabled, the <c>/api/threadpool</c> API it reads.</summary>
    public static WebApplication MapThreadPoolHealth(this WebApplication app)
    {
        app.UseDefaultFiles();
        app.UseStaticFiles();
        if (app.Services.GetRequiredService<IOptions<ThreadPoolHealthOptions>>().Value.Enabled)
        {
            app.MapThreadPoolHealthApi();
        }

        return app;
    }

    private static bool IsEnabled(IConfiguration configuration) =>
        configuration.GetValue(ThreadPoolHealthOptions.SectionName + ":" + nameof(ThreadPoolHealthOptions.Enabled), defaultValue: true);
}
