namespace DiagnosticScenarios.Scenarios.Mock;

public static class ScenarioRegistration
{
    /// <summary>
    /// The mock database, the scenario defaults, the state Microsoft's tutorial scenarios keep per process and how many may
    /// run at once. Features whose pairs query the mock database call this first: once registered, it is not registered again.
    /// </summary>
    public static IServiceCollection AddScenarios(this IServiceCollection services, IConfiguration configuration)
    {
        if (services.Any(s => s.ServiceType == typeof(MockDatabase)))
        {
            return services;
        }

        services.AddOptions<ScenarioOptions>()
            .Bind(configuration.GetSection(ScenarioOptions.SectionName))
            .ValidateDataAnnotations()
            .ValidateOnStart();

        services.AddSingleton<MockDatabase>();
        services.AddSingleton<DeadlockScenario>();
        services.AddSingleton<MemoryLeakScenario>();
        services.AddScenarioConcurrencyLimits(configuration);
        return services;
    }

    /// <summary>At most <c>Scenarios:ConcurrencyLimits</c> of each destructive scenario at once; beyond, 429 with Retry-After.</summary>
    public static IApplicationBuilder UseScenarios(this IApplicationBuilder app) => app.UseRateLimiter();

    /// <summary>The scenario controllers of every family.</summary>
    public static IEndpointRouteBuilder MapScenarios(this IEndpointRouteBuilder endpoints)
    {
        endpoints.MapControllers();
        return endpoints;
    }
}
