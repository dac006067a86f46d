using DiagnosticScenarios.Controls;
using DiagnosticScenarios.Detection;

namespace DiagnosticScenarios.StackCapture;

public static class StackCaptureRegistration
{
    /// <summary>The capture service the detector calls on starvation; it starts its thread only on the first capture.</summary>
    public static IServiceCollection AddStackCapture(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddOptions<StackCaptureOptions>().Bind(configuration.GetSection(StackCaptureOptions.SectionName)).ValidateDataAnnotations().ValidateOnStart();
        services.AddSingleton<StackCaptureService>();
        return services;
    }

    /// <summary>
    /// <c>GET /api/threadpool/stacks</c> (the latest capture) and <c>POST</c> (one now): both controls, since a capture shows
    /// the app's internals, every method its threads are in.
    /// </summary>
    public static IEndpointRouteBuilder MapStackCapture(this IEndpointRouteBuilder endpoints)
    {
        // The page's reads of its own tooling are not the app's load: left out of the attribution, as the rest of /api/threadpool.
        var api = endpoints.MapGroup("/api/threadpool/stacks").WithTags("ThreadPoolHealth").WithMetadata(ExcludeFromAttribution.Instance);

        api.MapGet("", (StackCaptureService capture) => capture.Latest is { } latest
                ? Results.Ok(latest)
                : TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, title: "No stack capture yet.",
                    detail: "The app captures its threads when the detector declares starvation; POST /api/threadpool/stacks takes one now."))
            .RequireControlGate()
            .WithSummary("The latest grouped stack capture of the app's own threads: groups of identical stacks, most first, each with its blocking frame and app frame (a control: loopback only, with the X-DiagnosticScenarios-Control header).");

        api.MapPost("", async (HttpContext context, StackCaptureService capture) =>
                TypedResults.Ok(await capture.CaptureNowAsync().WaitAsync(context.RequestAborted)))
            .RequireControlGate()
            .WithSummary("Takes a grouped stack capture of the app's own threads now (a control: loopback only, with the X-DiagnosticScenarios-Control header).");

        return endpoints;
    }
}
