namespace DiagnosticScenarios.Scenarios;

public static class ScenarioRegistration
{
    /// <summary>The mock database, the scenario defaults, the state Microsoft's tutorial scenarios keep per process and how many may run at once.</summary>
    public static IServiceCollection AddScenarios(this IServiceCollection services, IConfiguration configuration)
    {
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
}
