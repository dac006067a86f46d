using DiagnosticScenarios.Analyzers;

namespace DiagnosticScenarios.Tests.Analyzers;

/// <summary>Every rule has its page in docs/analyzers, its help link opens that page, and the package's README lists it.</summary>
public sealed class RulePagesTests
{
    private static readonly string PagesFolder = Path.Combine(RepositoryPaths.Root, "docs", "analyzers");

    public static TheoryData<string> RuleIds => [.. new BlockingAnalyzer().SupportedDiagnostics.Select(d => d.Id)];

    [Theory]
    [MemberData(nameof(RuleIds))]
    public async Task HelpLink_OpensTheRulesPage_WhichOpensWithItsIdAndTitle(string id)
    {
        var rule = new BlockingAnalyzer().SupportedDiagnostics.Single(d => d.Id == id);

        var page = new Uri(rule.HelpLinkUri).LocalPath;

        Assert.Equal(Path.Combine(PagesFolder, id + ".md"), page);
        var lines = await File.ReadAllLinesAsync(page).DefaultTimeout();
        Assert.Equal($"# {id}: {rule.Title}", lines[0]);
    }

    [Fact]
    public async Task Readme_RulesTable_ListsEveryRuleWithItsTitle_InOrder()
    {
        var readme = await File.ReadAllLinesAsync(Path.Combine(PagesFolder, "README.md")).DefaultTimeout();

        var rows = MarkdownTables.Rows(readme, ["rule", "title", "where", "fix"]).Select(row => row.Split(" | ")).ToList();

        var rules = new BlockingAnalyzer().SupportedDiagnostics;
        Assert.Equal(rules.Select(r => $"[{r.Id}]({r.Id}.md)"), rows.Select(cells => cells[0]));
        Assert.Equal(rules.Select(r => r.Title.ToString(System.Globalization.CultureInfo.InvariantCulture)), rows.Select(cells => cells[1]));
    }
}
