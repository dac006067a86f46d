using DiagnosticScenarios.Detection;

namespace DiagnosticScenarios.Catalogue;

public static class CatalogueEndpoints
{
    /// <summary><c>GET /api/scenarios</c>: the catalogue, read-only, for the page and the load runner.</summary>
    public static IEndpointRouteBuilder MapScenarioCatalogue(this IEndpointRouteBuilder endpoints)
    {
        endpoints.MapGet("/api/scenarios", () => TypedResults.Ok(CatalogueAnswer.Current))
            .WithTags("Catalogue")
            .WithMetadata(ExcludeFromAttribution.Instance)
            .WithSummary("Every scenario: route, family, verdict (BAD, GOOD or baseline), the code shape and why; and each family's default delay.");
        return endpoints;
    }
}

/// <summary>The answer of <c>GET /api/scenarios</c>.</summary>
public sealed record CatalogueAnswer(IReadOnlyList<ScenarioFamily> Families, IReadOnlyList<Scenario> Scenarios)
{
    public static CatalogueAnswer Current { get; } = new(ScenarioCatalogue.Families, ScenarioCatalogue.Scenarios);
}
