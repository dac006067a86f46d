namespace DiagnosticScenarios.Tests.Support;

/// <summary>The README's Markdown tables that the tests hold against the catalogue, read by their header.</summary>
internal static class ReadmeTables
{
    public static string ReadmePath { get; } = Path.Combine(RepositoryPaths.Root, "README.md");

    /// <summary>The rows of the table headed by exactly <paramref name="header"/>, each as its cells joined by " | "; fails when there is none.</summary>
    public static IReadOnlyList<string> Rows(IReadOnlyList<string> readme, IReadOnlyList<string> header)
    {
        var start = readme.ToList().FindIndex(line => line.StartsWith('|') && Cells(line).SequenceEqual(header));
        Assert.True(start >= 0, $"README.md has no table headed | {string.Join(" | ", header)} |");
        return [.. readme.Skip(start + 2).TakeWhile(line => line.StartsWith('|')).Select(line => string.Join(" | ", Cells(line)))];
    }

    /// <summary>A table in Markdown, for a failure message to show what the README should hold.</summary>
    public static string Render(IReadOnlyList<string> header, string alignment, IEnumerable<IReadOnlyList<string>> rows) =>
        string.Join(Environment.NewLine, [
            $"| {string.Join(" | ", header)} |",
            alignment,
            .. rows.Select(cells => $"| {string.Join(" | ", cells)} |")]);

    // Cells trimmed, a name's backticks dropped.
    private static IEnumerable<string> Cells(string line) =>
        line.Trim().Trim('|').Split('|').Select(cell => cell.Trim().Trim('`'));
}
