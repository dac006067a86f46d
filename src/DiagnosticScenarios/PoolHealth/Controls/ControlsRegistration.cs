using DiagnosticScenarios.PoolHealth.Detection;

namespace DiagnosticScenarios.PoolHealth.Controls;

/// <summary>The process controls: the <c>SetMinThreads</c> workaround and the load launch, under <c>/api/threadpool</c>, behind one gate.</summary>
public static class ControlsRegistration
{
    /// <summary>
    /// The gate (<see cref="ControlGate.AddControlGate"/>), the shutdown watchdog, and, when <c>ThreadPoolHealth:Enabled</c> is
    /// true, the workaround's startup value and the load launcher; registered once, however many features ask for them.
    /// </summary>
    public static IServiceCollection AddControls(this IServiceCollection services, IConfiguration configuration)
    {
        // Once registered, not again: features that use the controls' services register them too.
        if (services.Any(s => s.ImplementationType == typeof(ShutdownWatchdog)))
        {
            return services;
        }

        services.AddControlGate(configuration);

        // Ctrl+C and SIGTERM end the process within the shutdown timeout, even when a starved pool cannot run the graceful stop.
        services.AddHostedService<ShutdownWatchdog>();
        if (!ThreadPoolHealthOptions.IsEnabled(configuration))
        {
            return services;
        }

        services.AddSingleton<StartupMinThreads>();
        services.AddSingleton<LoadRunLauncher>();
        return services;
    }

    /// <summary>Answers the live page's CORS preflights for the controls.</summary>
    public static IApplicationBuilder UseControls(this IApplicationBuilder app) => app.UseCors();

    /// <summary>Mapped with the live page's API, when <c>ThreadPoolHealth:Enabled</c> is true: the page is where they are used.</summary>
    public static IEndpointRouteBuilder MapControls(this IEndpointRouteBuilder endpoints)
    {
        if (endpoints.ServiceProvider.GetService<StartupMinThreads>() is not { } startup)
        {
            return endpoints;
        }

        // Read now, before any request can change it.
        _ = startup.Value;

        // Each control brings the live page's CORS policy with its gate (RequireControlGate).
        var controls = endpoints.MapGroup("/api/threadpool").WithTags("ThreadPoolHealth").WithMetadata(ExcludeFromAttribution.Instance);
        controls.MapMinThreads();
        controls.MapLoad();
        return endpoints;
    }
}
