using DiagnosticScenarios.Analyzers;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;
using Microsoft.CodeAnalysis;

namespace DiagnosticScenarios.Tests.Scenarios.Catalogue;

/// <summary>
/// The catalogue's analyzer table (<see cref="Scenario.FlaggedBy"/>) is what the analyzers report on the scenario code:
/// for each BAD scenario of every family, exactly the rules that flag its <c>// BAD:</c> line; for each GOOD and baseline
/// scenario, nothing anywhere in its method. Deliberate suppressions are counted as if absent.
/// </summary>
[StartsNext("the whole app compiled with seven analyzers, on the processor")]
public sealed class AnalyzerTableTests(AnalyzedApp app) : IClassFixture<AnalyzedApp>
{
    public static TheoryData<string> BadScenarios => [.. ScenarioCatalogue.Scenarios.Where(s => s.Verdict == ScenarioVerdict.Bad).Select(s => s.Route)];

    public static TheoryData<string> CleanScenarios => [.. ScenarioCatalogue.Scenarios.Where(s => s.Verdict != ScenarioVerdict.Bad).Select(s => s.Route)];

    [Theory]
    [MemberData(nameof(BadScenarios))]
    public void BadLine_IsFlaggedByExactlyTheCataloguesRules_WithDeliberateSuppressionsIgnored(string route)
    {
        var scenario = ScenarioCatalogue.Scenarios.Single(s => s.Route == route);
        var badCode = ScenarioCode.BadCode(app.Compilation, scenario);

        var findings = badCode.Select(code => (Code: code, Found: FindingsIn(code))).ToList();

        var flagged = findings.SelectMany(f => f.Found).Select(d => d.Id).ToHashSet(StringComparer.Ordinal);
        Assert.True(flagged.SetEquals(scenario.FlaggedBy),
            $"{ScenarioCode.Describe(scenario)}: the catalogue says [{string.Join(", ", scenario.FlaggedBy)}], the analyzers flag " +
            $"[{string.Join(", ", AnalyzerRules.All.Concat(AnalyzerRules.ThisPackage).Where(flagged.Contains))}]." +
            string.Concat(findings.Select(f => $"{Environment.NewLine}  BAD line {ScenarioCode.FileLine(f.Code)}: {Describe(f.Found)}")));
    }

    [Theory]
    [MemberData(nameof(CleanScenarios))]
    public void GoodOrBaselineMethod_IsFlaggedByNoRule(string route)
    {
        var scenario = ScenarioCatalogue.Scenarios.Single(s => s.Route == route);
        var body = ScenarioCode.Body(app.Compilation, scenario);

        var found = FindingsIn(body);

        Assert.True(found.Count == 0 && scenario.FlaggedBy.Count == 0,
            $"{ScenarioCode.Describe(scenario)} ({scenario.Verdict}), method at {ScenarioCode.FileLine(body)}: catalogue " +
            $"[{string.Join(", ", scenario.FlaggedBy)}], analyzers {Describe(found)}");
    }

    [Fact]
    public async Task ScenariosPage_AnalyzerTable_ListsEveryScenarioWithTheCataloguesRules()
    {
        var page = await File.ReadAllLinesAsync(MarkdownTables.ScenariosPagePath).DefaultTimeout();

        var rows = DocumentedAnalyzerTable.Rows(page);

        var expected = ScenarioCatalogue.Scenarios.Select(DocumentedAnalyzerTable.Row).ToList();
        Assert.True(rows.SequenceEqual(expected),
            $"docs/scenarios.md's analyzer table differs from the catalogue. It should read:{Environment.NewLine}{DocumentedAnalyzerTable.Render(ScenarioCatalogue.Scenarios)}");
    }

    [Fact]
    public void ThisPackagesColumn_CoversEveryRuleThePackageReports() =>
        Assert.Equal(AnalyzerRules.ThisPackage, new BlockingAnalyzer().SupportedDiagnostics.Select(d => d.Id).Distinct().Order(StringComparer.Ordinal));

    /// <summary>
    /// The rules table's "default" column is each rule as its package ships it, read from the rule's own descriptor: off
    /// when not enabled by default, else its default severity (info, warning, error). Typed by hand, it once went unchecked.
    /// </summary>
    [Fact]
    public async Task ScenariosPage_RulesTable_DefaultColumn_IsEachRulesShippedDefault()
    {
        var page = await File.ReadAllLinesAsync(MarkdownTables.ScenariosPagePath).DefaultTimeout();
        var descriptors = AnalyzerAssemblies.AnalyzersOf(AnalyzerRules.All).SelectMany(a => a.SupportedDiagnostics)
            .GroupBy(d => d.Id).ToDictionary(g => g.Key, g => g.First());

        var rows = MarkdownTables.Rows(page, ["rule", "package", "default", "flags"]).Select(row => row.Split(" | ")).ToList();

        Assert.Equal(AnalyzerRules.All, rows.Select(cells => cells[0]));
        foreach (var cells in rows)
        {
            var descriptor = descriptors[cells[0]];
            var shipped = !descriptor.IsEnabledByDefault ? "off" : descriptor.DefaultSeverity switch
            {
                DiagnosticSeverity.Info => "info",
                DiagnosticSeverity.Warning => "warning",
                DiagnosticSeverity.Error => "error",
                _ => "hidden",
            };
            Assert.True(cells[2] == shipped || cells[2].StartsWith(shipped + " ", StringComparison.Ordinal),
                $"{cells[0]}: docs/scenarios.md says its default is '{cells[2]}'; its package ships it {shipped}");
        }
    }

    private List<Diagnostic> FindingsIn(SyntaxNode code) =>
        [.. app.Findings.Where(d => d.Location.SourceTree == code.SyntaxTree && d.Location.SourceSpan.OverlapsWith(code.Span))];

    private static string Describe(IReadOnlyCollection<Diagnostic> found) =>
        found.Count == 0
            ? "none"
            : string.Join("; ", found.Select(d =>
                $"{d.Id}{(d.IsSuppressed ? " (suppressed)" : string.Empty)} at {d.Location.GetLineSpan().StartLinePosition.Line + 1}: {d.GetMessage(System.Globalization.CultureInfo.InvariantCulture)}"));
}
