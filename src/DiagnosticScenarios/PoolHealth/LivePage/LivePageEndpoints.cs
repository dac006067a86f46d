using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.PoolHealth.StackCapture;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Security;
using Microsoft.Extensions.DependencyInjection.Extensions;

namespace DiagnosticScenarios.PoolHealth.LivePage;

/// <summary>The live page: its own server (<see cref="LivePageServer"/>), and on the app its read-only API and a way to the page.</summary>
public static class LivePageEndpoints
{
    /// <summary>
    /// The page's data and its own server, and the features whose figures and controls it shows: Detection, the Controls and
    /// the stack capture. Nothing when <c>ThreadPoolHealth:Enabled</c> is false.
    /// </summary>
    public static IServiceCollection AddLivePage(this IServiceCollection services, IConfiguration configuration)
    {
        if (!ThreadPoolHealthOptions.IsEnabled(configuration))
        {
            return services;
        }

        // The controls bring the app's origins (AddControlGate); the page's server checks Host as the app does, and serves
        // the catalogue as the app does.
        services.AddDetection(configuration).AddControls(configuration).AddStackCapture(configuration).AddScenarioCatalogue(configuration);
        services.TryAddSingleton<AllowedHosts>();

        services.AddOffPoolLimits(configuration);
        services.AddOptions<LivePageOptions>().Bind(configuration.GetSection(LivePageOptions.SectionName)).ValidateDataAnnotations().ValidateOnStart();
        services.AddSingleton<LivePageData>();
        services.AddSingleton<LivePageServer>();
        services.AddHostedService(provider => provider.GetRequiredService<LivePageServer>());
        return services;
    }

    /// <summary>
    /// <c>/</c> takes the browser to the live page's own server; when that server is not listening (its port was taken, or
    /// the detector is off), the app serves the page's files itself.
    /// </summary>
    public static IApplicationBuilder UseLivePage(this IApplicationBuilder app)
    {
        if (app.ApplicationServices.GetService<LivePageServer>() is { } server)
        {
            app.Use((context, next) =>
                context.Request.Path == "/" && server.PageUrl(context.Request.Host.Host) is { } page
                    ? TypedResults.Redirect(page).ExecuteAsync(context)
                    : next(context));
        }

        return app.UseDefaultFiles().UseStaticFiles();
    }

    /// <summary><c>/api/threadpool</c>, its stream and the page's settings, when <c>ThreadPoolHealth:Enabled</c> is true.</summary>
    public static IEndpointRouteBuilder MapLivePage(this IEndpointRouteBuilder endpoints)
    {
        if (endpoints.ServiceProvider.GetService<LivePageData>() is null)
        {
            return endpoints;
        }

        // The page's own polling and stream are tooling, not the app's load: left out of the attribution.
        var api = endpoints.MapGroup("/api/threadpool").WithTags("ThreadPoolHealth").WithMetadata(ExcludeFromAttribution.Instance);

        api.MapGet("", (LivePageData data) => TypedResults.Ok(data.Snapshot()))
            .WithSummary("A snapshot of the thread pool, the queue-delay probe, the detector's verdict, thread injections by reason, and per-endpoint figures.");

        api.MapGet("/stream", HealthStream.Open)
            .WithSummary("Server-sent events, one sample a second; send Last-Event-ID (or ?after=) to receive what was missed.");

        api.MapGet("/page", (HttpContext context, LivePageServer server) =>
                TypedResults.Ok(new PageSettings(ServedOffThePool: false, ControlsAt: "", server.PageUrl(context.Request.Host.Host))))
            .WithSummary("Where the live page is served from: through the app (this answer), or by its own server, which stays live while the pool starves.");

        return endpoints;
    }
}
