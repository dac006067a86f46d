namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>A family of endpoints that run the same query in different code shapes (see SCENARIOS.md).</summary>
/// <param name="Name">What <c>compare --family</c> takes.</param>
/// <param name="RoutePrefix">Relative to the server's base address, ending in a slash.</param>
/// <param name="DefaultDelayMs">The query's delay when <c>--delay-ms</c> is not given.</param>
/// <param name="Scenarios">In the order they are measured.</param>
public sealed record ScenarioFamily(string Name, string RoutePrefix, int DefaultDelayMs, IReadOnlyList<Scenario> Scenarios)
{
    /// <summary>The families the app serves. Adding one is adding an entry here.</summary>
    public static IReadOnlyList<ScenarioFamily> All { get; } =
    [
        new("mock", "api/diagscenario/", 500,
        [
            new("taskwait", Verdict.Bad),
            new("tasksleepwait", Verdict.Bad),
            new("taskasyncwait", Verdict.Good),
            new("syncio", Verdict.Bad),
            new("asyncsyncio", Verdict.Bad),
            new("taskrunwait", Verdict.Bad),
            new("getawaiterresult", Verdict.Bad),
        ]),
        new("sql", "api/sqlscenario/", 1000,
        [
            new("sync", Verdict.Bad),
            new("asyncsyncio", Verdict.Bad),
            new("taskrun", Verdict.Bad),
            new("wait", Verdict.Bad),
            new("async", Verdict.Good),
        ]),
    ];

    public static ScenarioFamily Find(string name) =>
        All.FirstOrDefault(f => string.Equals(f.Name, name, StringComparison.OrdinalIgnoreCase))
        ?? throw new ArgumentException($"Unknown family '{name}'; known: {string.Join(", ", All.Select(f => f.Name))}.", nameof(name));

    public Scenario this[string scenario] =>
        Scenarios.FirstOrDefault(s => string.Equals(s.Name, scenario, StringComparison.OrdinalIgnoreCase))
        ?? throw new ArgumentException($"Family '{Name}' has no scenario '{scenario}'; known: {string.Join(", ", Scenarios.Select(s => s.Name))}.", nameof(scenario));

    /// <summary>The URL of one scenario on a server, with the delay as a query parameter.</summary>
    public Uri Url(Uri baseAddress, Scenario scenario, int delayMs)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        return new Uri(baseAddress, $"{RoutePrefix}{scenario.Name}?delayMs={delayMs}");
    }
}

/// <summary>One endpoint of a family.</summary>
public sealed record Scenario(string Name, Verdict Verdict);

public enum Verdict
{
    Bad,
    Good,
}
