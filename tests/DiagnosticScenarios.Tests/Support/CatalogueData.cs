using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>The tests' scenario lists, read from the app's catalogue so a new scenario is covered without editing a test.</summary>
public static class CatalogueData
{
    /// <summary>The BAD and GOOD shapes of a query family (its baseline left out), by name.</summary>
    public static IEnumerable<string> Shapes(ScenarioFamily family) =>
        ScenarioCatalogue.InFamily(family).Where(s => s.Verdict != ScenarioVerdict.Baseline).Select(s => s.Name);

    /// <summary>The scenario of <paramref name="family"/> named <paramref name="name"/>.</summary>
    public static Scenario Find(ScenarioFamily family, string name) => ScenarioCatalogue.InFamily(family).Single(s => s.Name == name);

    public static TheoryData<string> MockShapes => [.. Shapes(ScenarioCatalogue.Mock)];

    public static TheoryData<string> SqlShapes => [.. Shapes(ScenarioCatalogue.Sql)];

    /// <summary>The BAD shapes of the mock family, each measured against its GOOD twin.</summary>
    public static TheoryData<string> MockBadShapes => [.. BadShapes(ScenarioCatalogue.Mock)];

    /// <summary>The BAD shapes of the SQL family.</summary>
    public static TheoryData<string> SqlBadShapes => [.. BadShapes(ScenarioCatalogue.Sql)];

    /// <summary>The BAD scenarios of the blocking family that have a GOOD twin in it, by name.</summary>
    public static TheoryData<string> BlockingBadTwins => [.. BlockingPairs().Select(p => p.Bad.Name)];

    /// <summary>The GOOD twins of the blocking family, by name.</summary>
    public static TheoryData<string> BlockingGoodTwins => [.. BlockingPairs().Select(p => p.Good.Name)];

    /// <summary>The GOOD twin the catalogue measures <paramref name="bad"/> against.</summary>
    public static Scenario TwinOf(Scenario bad) => ScenarioCatalogue.Scenarios.Single(s => s.Route == bad.Twin);

    /// <summary>The blocking family's BAD scenarios with their GOOD twins in it, in the catalogue's order.</summary>
    public static IEnumerable<(Scenario Bad, Scenario Good)> BlockingPairs() =>
        ScenarioCatalogue.InFamily(ScenarioCatalogue.Blocking)
            .Where(s => s.Verdict == ScenarioVerdict.Bad && s.Twin?.StartsWith(ScenarioCatalogue.Blocking.RoutePrefix, StringComparison.Ordinal) == true)
            .Select(s => (s, TwinOf(s)));

    private static IEnumerable<string> BadShapes(ScenarioFamily family) =>
        ScenarioCatalogue.InFamily(family).Where(s => s.Verdict == ScenarioVerdict.Bad).Select(s => s.Name);

    /// <summary>Every route of the catalogue with its verdict.</summary>
    public static TheoryData<string, ScenarioVerdict> Routes
    {
        get
        {
            var data = new TheoryData<string, ScenarioVerdict>();
            foreach (var scenario in ScenarioCatalogue.Scenarios)
            {
                data.Add(scenario.Route, scenario.Verdict);
            }

            return data;
        }
    }
}
