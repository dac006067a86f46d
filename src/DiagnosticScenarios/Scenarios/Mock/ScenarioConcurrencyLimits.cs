using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Scenarios.Mock;

/// <summary>
/// How many requests of each destructive scenario may run at once in this process, from <c>Scenarios:ConcurrencyLimits</c>.
/// One request is bounded by its own parameters; these bound how many of them the machine carries together.
/// </summary>
public sealed class ScenarioConcurrencyLimits
{
    public const string SectionName = ScenarioOptions.SectionName + ":ConcurrencyLimits";

    // Policy names, one per limited scenario; the actions name them in [EnableRateLimiting].
    public const string DeadlockPolicy = "deadlock";
    public const string HighCpuPolicy = "highcpu";
    public const string MemSpikePolicy = "memspike";
    public const string MemLeakPolicy = "memleak";
    public const string BlockingTaskBurstPolicy = "taskburst-blocking";

    [Range(1, 1000)]
    public int Deadlock { get; set; } = 1;

    /// <summary>Spinning threads at once: one per core of a two-core laptop leaves nothing for the app.</summary>
    [Range(1, 1000)]
    public int HighCpu { get; set; } = 1;

    [Range(1, 1000)]
    public int MemSpike { get; set; } = 1;

    [Range(1, 1000)]
    public int MemLeak { get; set; } = 1;

    /// <summary>Blocking bursts at once; <c>mode=async</c> bursts hold no threads and are not limited.</summary>
    [Range(1, 1000)]
    public int BlockingTaskBurst { get; set; } = 1;

    /// <summary>What a refused client is told to wait, in seconds, before trying again.</summary>
    [Range(1, 3600)]
    public int RetryAfterSeconds { get; set; } = 5;
}

public static class ScenarioConcurrencyRegistration
{
    /// <summary>ASP.NET Core's rate limiter with a concurrency limiter per destructive scenario; beyond it, 429 ProblemDetails with Retry-After.</summary>
    public static IServiceCollection AddScenarioConcurrencyLimits(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddOptions<ScenarioConcurrencyLimits>()
            .Bind(configuration.GetSection(ScenarioConcurrencyLimits.SectionName))
            .ValidateDataAnnotations()
            .ValidateOnStart();

        services.AddRateLimiter(options =>
        {
            options.RejectionStatusCode = StatusCodes.Status429TooManyRequests;
            options.OnRejected = WriteRejectionAsync;
            AddPolicy(options, ScenarioConcurrencyLimits.DeadlockPolicy, l => l.Deadlock);
            AddPolicy(options, ScenarioConcurrencyLimits.HighCpuPolicy, l => l.HighCpu);
            AddPolicy(options, ScenarioConcurrencyLimits.MemSpikePolicy, l => l.MemSpike);
            AddPolicy(options, ScenarioConcurrencyLimits.MemLeakPolicy, l => l.MemLeak);
            AddPolicy(options, ScenarioConcurrencyLimits.BlockingTaskBurstPolicy, l => l.BlockingTaskBurst,
                context => !string.Equals(context.Request.Query["mode"], nameof(TaskBurstMode.Async), StringComparison.OrdinalIgnoreCase));
        });

        return services;
    }

    private static void AddPolicy(RateLimiterOptions options, string policy, Func<ScenarioConcurrencyLimits, int> limit, Func<HttpContext, bool>? applies = null) =>
        options.AddPolicy(policy, context =>
        {
            if (applies is not null && !applies(context))
            {
                return RateLimitPartition.GetNoLimiter(policy + ":unlimited");
            }

            var permits = limit(context.RequestServices.GetRequiredService<IOptions<ScenarioConcurrencyLimits>>().Value);
            return RateLimitPartition.GetConcurrencyLimiter(policy, _ => new ConcurrencyLimiterOptions { PermitLimit = permits, QueueLimit = 0 });
        });

    private static async ValueTask WriteRejectionAsync(OnRejectedContext rejected, CancellationToken cancellationToken)
    {
        var context = rejected.HttpContext;
        var limits = context.RequestServices.GetRequiredService<IOptions<ScenarioConcurrencyLimits>>().Value;
        var policy = context.GetEndpoint()?.Metadata.GetMetadata<EnableRateLimitingAttribute>()?.PolicyName ?? "this scenario";
        context.Response.Headers.RetryAfter = limits.RetryAfterSeconds.ToString(CultureInfo.InvariantCulture);

        await context.RequestServices.GetRequiredService<IProblemDetailsService>().WriteAsync(new ProblemDetailsContext
        {
            HttpContext = context,
            ProblemDetails =
            {
                Status = StatusCodes.Status429TooManyRequests,
                Title = "Too many of these scenarios are running at once.",
                Detail = $"The {policy} limit of this process ({ScenarioConcurrencyLimits.SectionName}) is reached; " +
                         $"try again in {limits.RetryAfterSeconds} s, when one has finished.",
            },
        });
    }
}
