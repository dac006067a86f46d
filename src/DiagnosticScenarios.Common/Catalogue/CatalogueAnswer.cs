namespace DiagnosticScenarios.Common.Catalogue;

/// <summary>The answer of <c>GET /api/scenarios</c>: what the app and the live page's server serve, and the load runner reads.</summary>
public sealed record CatalogueAnswer(IReadOnlyList<ScenarioFamily> Families, IReadOnlyList<Scenario> Scenarios)
{
    /// <summary>The catalogue's path from a server's root.</summary>
    public const string Route = "api/scenarios";
}
