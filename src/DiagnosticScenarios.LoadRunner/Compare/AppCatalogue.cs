using System.Net.Http.Json;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>
/// The scenarios as the app under test serves them at <c>GET /api/scenarios</c>. The runner keeps no list of its own:
/// the app it measures is the authority on what it serves, whichever build <c>--app</c> names.
/// </summary>
public sealed record AppCatalogue(IReadOnlyList<AppCatalogue.FamilyEntry> Families, IReadOnlyList<AppCatalogue.ScenarioEntry> Scenarios)
{
    public const string Route = "api/scenarios";

    public static async Task<AppCatalogue> ReadAsync(Uri baseAddress, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        using var client = new HttpClient { BaseAddress = baseAddress, Timeout = timeout };
        try
        {
            return await client.GetFromJsonAsync<AppCatalogue>(Route, CompareJson.Options, cancellationToken)
                ?? throw new MeasurementException($"{new Uri(baseAddress, Route)} answered no catalogue.");
        }
        catch (Exception e) when (!cancellationToken.IsCancellationRequested && e is HttpRequestException or TaskCanceledException or System.Text.Json.JsonException or NotSupportedException)
        {
            // The server answered its readiness check and then not this (a --timeout shorter than its first answer, or an
            // app whose catalogue is not this one's): the run ends with one line naming it.
            throw new MeasurementException($"Could not read the app's catalogue at {new Uri(baseAddress, Route)} within the --timeout of {timeout.TotalMilliseconds:0.###} ms: {e.Message}", e);
        }
    }

    /// <summary>
    /// The route of the app's baseline, the request that does nothing (<c>ping</c>): what the probe beside each load sends,
    /// read from the catalogue like every other route.
    /// </summary>
    public string BaselineRoute => Scenarios.FirstOrDefault(s => s.Verdict == Verdict.Baseline)?.Route
        ?? throw new UnknownScenarioException($"The app's catalogue ({Route}) has no baseline scenario for the ping probe.");

    /// <summary>A family <c>compare</c> can load, with its BAD and GOOD scenarios in the catalogue's order (the baseline left out).</summary>
    /// <exception cref="UnknownScenarioException">The app serves no such family, or not one that can be loaded.</exception>
    public ScenarioFamily Family(string name)
    {
        var comparable = Families.Where(f => f.Loadable).ToList();
        var family = comparable.FirstOrDefault(f => string.Equals(f.Name, name, StringComparison.OrdinalIgnoreCase))
            ?? throw new UnknownScenarioException($"Unknown family '{name}'; known: {string.Join(", ", comparable.Select(f => f.Name))}.");
        return new ScenarioFamily(
            family.Name,
            family.DefaultDelayMs,
            [.. Scenarios.Where(s => s.Family == family.Name && s.Verdict != Verdict.Baseline).Select(s => new Scenario(s.Name, s.Route, s.Verdict)
            {
                Load = s.Load,
                Twin = Scenarios.FirstOrDefault(t => t.Route == s.Twin)?.Name,
            })]);
    }

    public sealed record FamilyEntry(string Name, string RoutePrefix, int? DefaultDelayMs, bool Loadable);

    /// <param name="Load">How to load it when a plain GET is not how it is used; null for a GET.</param>
    /// <param name="Twin">For a BAD scenario, the route of the GOOD one it is measured against; null otherwise.</param>
    public sealed record ScenarioEntry(string Name, string Route, string Family, Verdict Verdict, ScenarioLoad? Load = null, string? Twin = null);
}

/// <summary>A scenario whose requests carry a body: the method, the body's size and how long each client takes to upload it.</summary>
public sealed record ScenarioLoad(string Method, int BodyBytes, int UploadMs);

/// <summary>A family of endpoints that run the same query in different code shapes, as the app's catalogue lists them.</summary>
/// <param name="Name">What <c>compare --family</c> takes.</param>
/// <param name="DefaultDelayMs">
/// The query's delay when <c>--delay-ms</c> is not given; null when each scenario has a default of its own, which the app
/// then applies itself.
/// </param>
/// <param name="Scenarios">In the order they are measured.</param>
public sealed record ScenarioFamily(string Name, int? DefaultDelayMs, IReadOnlyList<Scenario> Scenarios)
{
    /// <summary>The named scenarios, or all of them when none is named.</summary>
    /// <exception cref="UnknownScenarioException">The family has no scenario of one of the names.</exception>
    public IReadOnlyList<Scenario> Select(IReadOnlyList<string> names) =>
        names.Count == 0 ? Scenarios : [.. names.Select(Find)];

    private Scenario Find(string name) =>
        Scenarios.FirstOrDefault(s => string.Equals(s.Name, name, StringComparison.OrdinalIgnoreCase))
        ?? throw new UnknownScenarioException($"Family '{Name}' has no scenario '{name}'; known: {string.Join(", ", Scenarios.Select(s => s.Name))}.");
}

/// <summary>One endpoint of a family.</summary>
/// <param name="Route">From the server's root, e.g. <c>/api/diagscenario/taskwait</c>.</param>
public sealed record Scenario(string Name, string Route, Verdict Verdict)
{
    /// <summary>How to load it when a plain GET is not how it is used; null for a GET.</summary>
    public ScenarioLoad? Load { get; init; }

    /// <summary>For a BAD scenario, the name of the GOOD one it is measured against; null otherwise.</summary>
    public string? Twin { get; init; }

    /// <summary>The URL of this scenario on a server, with the delay as a query parameter when one is given.</summary>
    public Uri Url(Uri baseAddress, int? delayMs) =>
        new(baseAddress, Route.TrimStart('/') + (delayMs is { } ms ? FormattableString.Invariant($"?delayMs={ms}") : ""));

    /// <summary>The load runner's options for this scenario at <paramref name="url"/>: its method and slow upload, if any.</summary>
    public LoadOptions LoadOptions(Uri url) => Load is { } load
        ? new LoadOptions { Url = url, Method = new HttpMethod(load.Method), BodyBytes = load.BodyBytes, UploadOver = TimeSpan.FromMilliseconds(load.UploadMs) }
        : new LoadOptions { Url = url };
}

public enum Verdict
{
    Bad,
    Good,
    Baseline,
}

/// <summary>The app under test serves no family or scenario of that name.</summary>
public sealed class UnknownScenarioException(string message) : Exception(message);
