using System.Net.Http.Json;
using DiagnosticScenarios.Common.Catalogue;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>
/// The scenarios as the app under test serves them at <c>GET /api/scenarios</c>. The runner keeps no list of its own:
/// the app it measures is the authority on what it serves, whichever build <c>--app</c> names.
/// </summary>
public sealed class AppCatalogue(CatalogueAnswer served)
{
    public static async Task<AppCatalogue> ReadAsync(Uri baseAddress, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        using var client = new HttpClient { BaseAddress = baseAddress, Timeout = timeout };
        try
        {
            return new AppCatalogue(await client.GetFromJsonAsync<CatalogueAnswer>(CatalogueAnswer.Route, CompareJson.Options, cancellationToken)
                ?? throw new MeasurementException($"{new Uri(baseAddress, CatalogueAnswer.Route)} answered no catalogue."));
        }
        catch (Exception e) when (!cancellationToken.IsCancellationRequested && e is HttpRequestException or TaskCanceledException or System.Text.Json.JsonException or NotSupportedException)
        {
            // The server answered its readiness check and then not this (a --timeout shorter than its first answer, or an
            // app whose catalogue is not this one's): the run ends with one line naming it.
            throw new MeasurementException($"Could not read the app's catalogue at {new Uri(baseAddress, CatalogueAnswer.Route)} within the --timeout of {timeout.TotalMilliseconds:0.###} ms: {e.Message}", e);
        }
    }

    /// <summary>
    /// The route of the app's baseline, the request that does nothing (<c>ping</c>): what the probe beside each load sends,
    /// read from the catalogue like every other route.
    /// </summary>
    public string BaselineRoute => served.Scenarios.FirstOrDefault(s => s.Verdict == ScenarioVerdict.Baseline)?.Route
        ?? throw new UnknownScenarioException($"The app's catalogue ({CatalogueAnswer.Route}) has no baseline scenario for the ping probe.");

    /// <summary>A family <c>compare</c> can load, with its BAD and GOOD scenarios in the catalogue's order (the baseline left out).</summary>
    /// <exception cref="UnknownScenarioException">The app serves no such family, or not one that can be loaded.</exception>
    public ComparedFamily Family(string name)
    {
        var comparable = served.Families.Where(f => f.Loadable).ToList();
        var family = comparable.FirstOrDefault(f => string.Equals(f.Name, name, StringComparison.OrdinalIgnoreCase))
            ?? throw new UnknownScenarioException($"Unknown family '{name}'; known: {string.Join(", ", comparable.Select(f => f.Name))}.");
        return new ComparedFamily(family.Name, family.DefaultDelayMs, [.. served.Scenarios.Where(s => s.Family == family.Name && s.Verdict != ScenarioVerdict.Baseline)]);
    }

    /// <summary>For a BAD scenario, the name of the GOOD one it is measured against (in any family); null otherwise.</summary>
    public string? TwinOf(Scenario scenario)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        return served.Scenarios.FirstOrDefault(t => t.Route == scenario.Twin)?.Name;
    }
}

/// <summary>A family of endpoints that run the same query in different code shapes, as <c>compare</c> measures them.</summary>
/// <param name="Name">What <c>compare --family</c> takes.</param>
/// <param name="DefaultDelayMs">
/// The query's delay when <c>--delay-ms</c> is not given; null when each scenario has a default of its own, which the app
/// then applies itself.
/// </param>
/// <param name="Scenarios">Its BAD and GOOD scenarios, in the order they are measured.</param>
public sealed record ComparedFamily(string Name, int? DefaultDelayMs, IReadOnlyList<Scenario> Scenarios)
{
    /// <summary>The named scenarios, or all of them when none is named.</summary>
    /// <exception cref="UnknownScenarioException">The family has no scenario of one of the names.</exception>
    public IReadOnlyList<Scenario> Select(IReadOnlyList<string> names) =>
        names.Count == 0 ? Scenarios : [.. names.Select(Find)];

    private Scenario Find(string name) =>
        Scenarios.FirstOrDefault(s => string.Equals(s.Name, name, StringComparison.OrdinalIgnoreCase))
        ?? throw new UnknownScenarioException($"Family '{Name}' has no scenario '{name}'; known: {string.Join(", ", Scenarios.Select(s => s.Name))}.");
}

/// <summary>The app under test serves no family or scenario of that name.</summary>
public sealed class UnknownScenarioException(string message) : Exception(message);
