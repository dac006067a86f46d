using DiagnosticScenarios.Detection;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Controls;

/// <summary>The process controls: the <c>SetMinThreads</c> workaround and the load launch, under <c>/api/threadpool</c>.</summary>
public static class ControlsRegistration
{
    public static IServiceCollection AddControls(this IServiceCollection services, IConfiguration configuration)
    {
        if (ThreadPoolHealthOptions.IsEnabled(configuration))
        {
            services.AddSingleton<StartupMinThreads>();
            services.AddSingleton<LoadRunLauncher>();
        }

        return services;
    }

    /// <summary>Mapped with the live page's API, when <c>ThreadPoolHealth:Enabled</c> is true: the page is where they are used.</summary>
    public static WebApplication MapControls(this WebApplication app)
    {
        if (!app.Services.GetRequiredService<IOptions<ThreadPoolHealthOptions>>().Value.Enabled)
        {
            return app;
        }

        // Read now, before any request can change it.
        _ = app.Services.GetRequiredService<StartupMinThreads>();

        var controls = app.MapGroup("/api/threadpool").WithTags("ThreadPoolHealth").WithMetadata(ExcludeFromAttribution.Instance);
        controls.MapMinThreads();
        controls.MapLoad();
        return app;
    }
}
