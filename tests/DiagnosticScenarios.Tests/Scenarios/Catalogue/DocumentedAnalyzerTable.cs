using System.Text.Json;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;

namespace DiagnosticScenarios.Tests.Scenarios.Catalogue;

/// <summary>
/// The analyzer table of docs/scenarios.md: one row per catalogue scenario, in the catalogue's order, a column per rule of
/// <see cref="AnalyzerRules.All"/>, a check mark where the rule flags the scenario's BAD line.
/// <code>
/// | family | scenario | verdict | VSTHRD002 | VSTHRD103 | CA1849 | MA0042 | MA0045 | AsyncFixer02 |
/// |---|---|---|:-:|:-:|:-:|:-:|:-:|:-:|
/// | mock | `taskwait` | BAD | ✓ | | | | | |
/// </code>
/// </summary>
internal static class DocumentedAnalyzerTable
{
    private const string Flagged = "✓";

    private static readonly string[] Header = ["family", "scenario", "verdict", .. AnalyzerRules.All];

    /// <summary>A row as its cells, trimmed, the scenario's backticks dropped.</summary>
    public static string Row(Scenario scenario) =>
        string.Join(" | ", [scenario.Family, scenario.Name, Verdict(scenario.Verdict), .. AnalyzerRules.All.Select(rule => scenario.FlaggedBy.Contains(rule) ? Flagged : string.Empty)]);

    /// <summary>The table's rows as <see cref="Row"/> writes them; fails when the document has no such table.</summary>
    public static IReadOnlyList<string> Rows(IReadOnlyList<string> document) => MarkdownTables.Rows(document, Header);

    /// <summary>The whole table in Markdown, for a failure message to show what the page should hold.</summary>
    public static string Render(IEnumerable<Scenario> scenarios) =>
        MarkdownTables.Render(Header, $"|---|---|---|{string.Concat(AnalyzerRules.All.Select(_ => ":-:|"))}",
            scenarios.Select(s => (IReadOnlyList<string>)[s.Family, $"`{s.Name}`", Verdict(s.Verdict), .. AnalyzerRules.All.Select(rule => s.FlaggedBy.Contains(rule) ? Flagged : string.Empty)]));

    // As GET /api/scenarios writes it: BAD, GOOD, baseline.
    private static string Verdict(ScenarioVerdict verdict) => JsonSerializer.Serialize(verdict).Trim('"');
}
