using DiagnosticScenarios.Detection;
using DiagnosticScenarios.Infrastructure;

namespace DiagnosticScenarios.Controls;

/// <summary>The process controls: the <c>SetMinThreads</c> workaround and the load launch, under <c>/api/threadpool</c>, behind one gate.</summary>
public static class ControlsRegistration
{
    /// <summary>The CORS policy that lets the live page, served from its own port, call the controls; no other origin.</summary>
    public const string LivePagePolicy = "live-page";

    /// <summary>
    /// The gate's options (<c>Controls</c>), the shutdown watchdog, and, when <c>ThreadPoolHealth:Enabled</c> is true, the
    /// workaround's startup value, the load launcher and the live page's CORS policy (from Infrastructure's <see cref="AppOrigins"/>).
    /// </summary>
    public static IServiceCollection AddControls(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddControlGate(configuration);

        // Ctrl+C and SIGTERM end the process within the shutdown timeout, even when a starved pool cannot run the graceful stop.
        services.AddHostedService<ShutdownWatchdog>();
        if (!ThreadPoolHealthOptions.IsEnabled(configuration))
        {
            return services;
        }

        services.AddSingleton<StartupMinThreads>();
        services.AddSingleton<LoadRunLauncher>();
        services.AddCors();
        services.AddOptions<Microsoft.AspNetCore.Cors.Infrastructure.CorsOptions>().Configure<AppOrigins>((cors, origins) =>
            cors.AddPolicy(LivePagePolicy, policy => policy
                .SetIsOriginAllowed(origins.IsLivePage)
                .WithHeaders(ControlGate.HeaderName, "Content-Type")
                .WithMethods("GET", "POST", "PUT", "DELETE")));
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
