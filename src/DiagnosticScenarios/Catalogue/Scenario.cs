using System.Text.Json.Serialization;

namespace DiagnosticScenarios.Catalogue;

/// <summary>One scenario of the catalogue.</summary>
/// <param name="Name">Unique within its family; what <c>compare --scenarios</c> takes.</param>
/// <param name="Route">The route template, as the OpenAPI document lists it.</param>
/// <param name="Family">The <see cref="ScenarioFamily.Name"/> it belongs to.</param>
/// <param name="Verdict">BAD, GOOD or baseline.</param>
/// <param name="Action">
/// The controller action that serves it (<c>Controller.Action</c>). The analyzer table finds the scenario's code from it:
/// the <c>// BAD:</c> lines in this method or, when it has none, in the nearest app methods it calls.
/// </param>
/// <param name="Pattern">The code shape, in one line.</param>
/// <param name="Why">Why it behaves as it does, in one line.</param>
public sealed record Scenario(string Name, string Route, string Family, ScenarioVerdict Verdict, string Action, string Pattern, string Why)
{
    /// <summary>
    /// The rules of <see cref="AnalyzerRules.All"/> that flag the scenario's <c>// BAD:</c> line when turned on, suppressions
    /// ignored; empty when none does, and for GOOD and baseline scenarios, whose code none of them flags.
    /// </summary>
    public IReadOnlyList<string> FlaggedBy { get; init; } = [];
}

/// <summary>Scenarios that share a route prefix and, for the query families, a default delay.</summary>
/// <param name="Name">What <c>compare --family</c> takes.</param>
/// <param name="RoutePrefix">Starts and ends with a slash.</param>
/// <param name="DefaultDelayMs">The query's delay when a request names no <c>delayMs</c>; null when the family runs no query.</param>
/// <param name="Loadable">Whether the load control and <c>compare</c> may load its scenarios.</param>
public sealed record ScenarioFamily(string Name, string RoutePrefix, int? DefaultDelayMs, bool Loadable);

[JsonConverter(typeof(JsonStringEnumConverter<ScenarioVerdict>))]
public enum ScenarioVerdict
{
    [JsonStringEnumMemberName("BAD")]
    Bad,

    [JsonStringEnumMemberName("GOOD")]
    Good,

    [JsonStringEnumMemberName("baseline")]
    Baseline,
}
