using DiagnosticScenarios.Catalogue;

namespace DiagnosticScenarios.Tests;

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
