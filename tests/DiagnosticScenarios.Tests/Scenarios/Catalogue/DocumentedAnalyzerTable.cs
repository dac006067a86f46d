using System.Text.Json;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;

namespace DiagnosticScenarios.Tests.Scenarios.Catalogue;

/// <summary>
/// The analyzer table of docs/scenarios.md: one row per catalogue scenario, in the catalogue's order, a column per rule of
/// <see cref="AnalyzerRules.All"/>, a check mark where the rule flags the scenario's BAD line, and a last column naming the
/// rules of this repository's package (<see cref="AnalyzerRules.ThisPackage"/>) that flag it.
/// <code>
/// | family | scenario | verdict | VSTHRD002 | VSTHRD103 | CA1849 | MA0042 | MA0045 | AsyncFixer02 | DSB |
/// |---|---|---|:-:|:-:|:-:|:-:|:-:|:-:|:-:|
/// | mock | `taskwait` | BAD | ✓ | | | | | | DSB002 |
/// </code>
/// </summary>
internal static class DocumentedAnalyzerTable
{
    private const string Flagged = "✓";

    private const string ThisPackageColumn = "DSB";

    private static readonly string[] Header = ["family", "scenario", "verdict", .. AnalyzerRules.All, ThisPackageColumn];

    /// <summary>A row as its cells, trimmed, the scenario's backticks dropped.</summary>
    public static string Row(Scenario scenario) =>
        string.Join(" | ", [scenario.Family, scenario.Name, .. Verdicts(scenario)]);

    /// <summary>The table's rows as <see cref="Row"/> writes them; fails when the document has no such table.</summary>
    public static IReadOnlyList<string> Rows(IReadOnlyList<string> document) => MarkdownTables.Rows(document, Header);

    /// <summary>The whole table in Markdown, for a failure message to show what the page should hold.</summary>
    public static string Render(IEnumerable<Scenario> scenarios) =>
        MarkdownTables.Render(Header, $"|---|---|---|{string.Concat(AnalyzerRules.All.Select(_ => ":-:|"))}:-:|",
            scenarios.Select(s => (IReadOnlyList<string>)[s.Family, $"`{s.Name}`", .. Verdicts(s)]));

    // The verdict, a check mark per other package's rule, this package's rules by name.
    private static IEnumerable<string> Verdicts(Scenario scenario) =>
    [
        Verdict(scenario.Verdict),
        .. AnalyzerRules.All.Select(rule => scenario.FlaggedBy.Contains(rule) ? Flagged : string.Empty),
        string.Join(", ", AnalyzerRules.ThisPackage.Where(scenario.FlaggedBy.Contains)),
    ];

    // As GET /api/scenarios writes it: BAD, GOOD, baseline.
    private static string Verdict(ScenarioVerdict verdict) => JsonSerializer.Serialize(verdict).Trim('"');
}
