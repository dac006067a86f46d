using DiagnosticScenarios.Common.Catalogue;
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
        endpoints.MapGet("/" + CatalogueAnswer.Route, (CatalogueAnswer catalogue) => TypedResults.Ok(catalogue))
            .WithTags("Catalogue")
            .WithMetadata(ExcludeFromAttribution.Instance)
            .WithSummary("Every scenario: route, family, verdict (BAD, GOOD or baseline), the code shape and why; and each family's default delay.");
        return endpoints;
    }
}

public static class CatalogueRegistration
{
    /// <summary>The catalogue as this app serves it, with the scenarios' options it is configured with.</summary>
    public static IServiceCollection AddScenarioCatalogue(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddScenarios(configuration);
        services.TryAddSingleton(provider => ScenarioCatalogue.Served(provider.GetRequiredService<IOptions<ScenarioOptions>>().Value.MockDelayMs));
        return services;
    }
}
