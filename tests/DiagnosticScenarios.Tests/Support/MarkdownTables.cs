namespace DiagnosticScenarios.Tests.Support;

/// <summary>The Markdown tables of the documents that the tests hold against the catalogue, read by their header.</summary>
internal static class MarkdownTables
{
    public static string ReadmePath { get; } = Path.Combine(RepositoryPaths.Root, "README.md");

    /// <summary>docs/scenarios.md: every family's table, the analyzers' tables and the runtime's view.</summary>
    public static string ScenariosPagePath { get; } = Path.Combine(RepositoryPaths.Root, "docs", "scenarios.md");

    /// <summary>The rows of the table headed by exactly <paramref name="header"/>, each as its cells joined by " | "; fails when there is none.</summary>
    public static IReadOnlyList<string> Rows(IReadOnlyList<string> document, IReadOnlyList<string> header)
    {
        var start = document.ToList().FindIndex(line => line.StartsWith('|') && Cells(line).SequenceEqual(header));
        Assert.True(start >= 0, $"the document has no table headed | {string.Join(" | ", header)} |");
        return [.. document.Skip(start + 2).TakeWhile(line => line.StartsWith('|')).Select(line => string.Join(" | ", Cells(line)))];
    }

    /// <summary>A table in Markdown, for a failure message to show what the document should hold.</summary>
    public static string Render(IReadOnlyList<string> header, string alignment, IEnumerable<IReadOnlyList<string>> rows) =>
        string.Join(Environment.NewLine, [
            $"| {string.Join(" | ", header)} |",
            alignment,
            .. rows.Select(cells => $"| {string.Join(" | ", cells)} |")]);

    // Cells trimmed, a name's backticks dropped.
    private static IEnumerable<string> Cells(string line) =>
        line.Trim().Trim('|').Split('|').Select(cell => cell.Trim().Trim('`'));
}
