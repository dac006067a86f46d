using System.Globalization;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.PoolHealth.Detection;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.PoolHealth.StackCapture;

public static class StackCaptureRegistration
{
    /// <summary>
    /// The capture service, listening to Detection's starvation event; its routes stand behind the Controls' gate, so it
    /// registers both; once. Nothing when <c>ThreadPoolHealth:Enabled</c> is false. It starts its thread only on the first capture.
    /// </summary>
    public static IServiceCollection AddStackCapture(this IServiceCollection services, IConfiguration configuration)
    {
        if (!ThreadPoolHealthOptions.IsEnabled(configuration) || services.Any(s => s.ServiceType == typeof(StackCaptureService)))
        {
            return services;
        }

        services.AddDetection(configuration).AddControlGate(configuration);

        services.AddOptions<StackCaptureOptions>().Bind(configuration.GetSection(StackCaptureOptions.SectionName)).ValidateDataAnnotations().ValidateOnStart();
        services.AddSingleton<StackCaptureService>();
        services.AddSingleton<AppDumps>();
        services.AddSingleton<IStarvationListener>(provider => provider.GetRequiredService<StackCaptureService>());
        return services;
    }

    /// <summary>
    /// <c>GET /api/threadpool/stacks</c> (the latest capture) and <c>POST</c> (one now): both controls, since a capture shows
    /// the app's internals, every method its threads are in. A capture that could not be taken is a 503 saying why.
    /// </summary>
    public static IEndpointRouteBuilder MapStackCapture(this IEndpointRouteBuilder endpoints)
    {
        if (endpoints.ServiceProvider.GetService<StackCaptureService>() is null)
        {
            return endpoints;
        }

        // The page's reads of its own tooling are not the app's load: left out of the attribution, as the rest of /api/threadpool.
        var api = endpoints.MapGroup("/api/threadpool/stacks").WithTags("ThreadPoolHealth").WithMetadata(ExcludeFromAttribution.Instance);

        api.MapGet("", (StackCaptureService capture) => Result(Answer(capture.Latest)))
            .RequireControlGate()
            .ProducesProblem(StatusCodes.Status503ServiceUnavailable)
            .WithSummary("The latest grouped stack capture of the app's own threads: groups of identical stacks, most first, each with its blocking frame and app frame (a control: loopback only, with the X-DiagnosticScenarios-Control header).");

        api.MapPost("", async (HttpContext context, StackCaptureService capture, AppDumps dumps, bool? dump) =>
            {
                try
                {
                    // The dump first: the moment the person at the machine asked for, before the capture's own session.
                    string? dumpFile = null;
                    if (dump == true)
                    {
                        var (path, problem) = await dumps.WriteAsync(context.RequestAborted).WaitAsync(CapturePatience, context.RequestAborted);
                        if (problem is not null)
                        {
                            return TypedResults.Problem(problem);
                        }

                        dumpFile = path;
                    }

                    var answer = Answer(await capture.CaptureNowAsync().WaitAsync(CapturePatience, context.RequestAborted));
                    return Result(answer.Body is StackCaptureResult taken ? (answer.Status, taken with { DumpFile = dumpFile }) : answer);
                }
                catch (TimeoutException)
                {
                    return Result(NotInTime());
                }
            })
            .RequireControlGate()
            .ProducesProblem(StatusCodes.Status503ServiceUnavailable)
            .ProducesProblem(StatusCodes.Status409Conflict)
            .ProducesProblem(StatusCodes.Status507InsufficientStorage)
            .WithSummary("Takes a grouped stack capture of the app's own threads now; with dump=true, a heap dump of the app first, named in the answer (one at a time, only with room on the disk; a control: loopback only, with the X-DiagnosticScenarios-Control header).");

        return endpoints;
    }

    /// <summary>
    /// What a read of a capture answers, on the app and on the live page's server alike: the capture; 404 before the first;
    /// 503 naming why when it could not be taken (e.g. a process started with <c>DOTNET_EnableDiagnostics=0</c>).
    /// </summary>
    public static (int Status, object Body) Answer(StackCaptureResult? capture) => capture switch
    {
        null => (StatusCodes.Status404NotFound, new ProblemDetails
        {
            Status = StatusCodes.Status404NotFound,
            Title = "No stack capture yet.",
            Detail = "The app captures its threads when the detector declares starvation; POST /api/threadpool/stacks takes one now.",
        }),
        { Snapshot: null } failed => Unavailable(failed.Error, new() { ["trigger"] = failed.Trigger, ["requestedAt"] = failed.RequestedAt }),
        _ => (StatusCodes.Status200OK, capture),
    };

    /// <summary>
    /// How long a request for a capture now waits for it, on the app and on the live page's server: the capture bounds its
    /// own recording, well within this.
    /// </summary>
    public static readonly TimeSpan CapturePatience = TimeSpan.FromMinutes(1);

    /// <summary>The 503 of a capture not finished within <see cref="CapturePatience"/>; it goes on, and the latest shows it.</summary>
    public static (int Status, object Body) NotInTime() => Unavailable(string.Create(CultureInfo.InvariantCulture,
        $"The capture did not finish within {CapturePatience.TotalSeconds:0} s; GET /api/threadpool/stacks shows it once it has."));

    /// <summary>The 503 of a capture that could not be taken, or not in time, saying why.</summary>
    public static (int Status, object Body) Unavailable(string? detail, Dictionary<string, object?>? extensions = null)
    {
        var problem = new ProblemDetails
        {
            Status = StatusCodes.Status503ServiceUnavailable,
            Title = "The stack capture could not be taken.",
            Detail = detail,
        };
        foreach (var (name, value) in extensions ?? [])
        {
            problem.Extensions[name] = value;
        }

        return (StatusCodes.Status503ServiceUnavailable, problem);
    }

    // A problem through the app's ProblemDetails service, as every other error of the app (its instance and trace id).
    private static IResult Result((int Status, object Body) answer) =>
        answer.Body is ProblemDetails problem ? TypedResults.Problem(problem) : Results.Json(answer.Body, statusCode: answer.Status, contentType: "application/json");
}
