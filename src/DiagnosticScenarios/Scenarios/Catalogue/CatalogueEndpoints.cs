using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.Scenarios.Mock;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Scenarios.Catalogue;

public static class CatalogueEndpoints
{
    /// <summary><c>GET /api/scenarios</c>: the catalogue, read-only, for the page and the load runner.</summary>
    public static IEndpointRouteBuilder MapScenarioCatalogue(this IEndpointRouteBuilder endpoints)
    {
        endpoints.MapGet("/api/scenarios", (CatalogueAnswer catalogue) => TypedResults.Ok(catalogue))
            .WithTags("Catalogue")
            .WithMetadata(ExcludeFromAttribution.Instance)
            .WithSummary("Every scenario: route, family, verdict (BAD, GOOD or baseline), the code shape and why; and each family's default delay.");
        return endpoints;
    }
}

/// <summary>The answer of <c>GET /api/scenarios</c>, on the app and on the live page's server alike.</summary>
public sealed record CatalogueAnswer(IReadOnlyList<ScenarioFamily> Families, IReadOnlyList<Scenario> Scenarios)
{
    /// <summary>The catalogue with the delays this app's options give (<see cref="ScenarioCatalogue.WithMockDelay"/>).</summary>
    public static CatalogueAnswer For(ScenarioOptions options)
    {
        var (families, scenarios) = ScenarioCatalogue.WithMockDelay(options.MockDelayMs);
        return new CatalogueAnswer(families, scenarios);
    }
}

public static class CatalogueRegistration
{
    /// <summary>The catalogue as this app serves it, with the scenarios' options it is configured with.</summary>
    public static IServiceCollection AddScenarioCatalogue(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddScenarios(configuration);
        services.TryAddSingleton(provider => CatalogueAnswer.For(provider.GetRequiredService<IOptions<ScenarioOptions>>().Value));
        return services;
    }
}
