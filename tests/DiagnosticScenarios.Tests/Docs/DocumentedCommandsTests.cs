using System.Text.RegularExpressions;

namespace DiagnosticScenarios.Tests.Docs;

/// <summary>
/// Every command a reader types from the README, the workshop, the running page and the tool's page is one CI runs word
/// for word: <c>scripts/walkthrough.sh</c> runs them in order and checks what the text says each shows; <c>.ci/run</c>
/// runs the README's test command.
/// </summary>
public sealed partial class DocumentedCommandsTests
{
    // The documents whose ```bash blocks a reader copies from, each relative to the repository's root.
    private static readonly string[] Documents = ["README.md", "docs/workshop.md", "docs/running.md", "docs/dotnet-blocking.md"];

    public static TheoryData<string, string> Commands()
    {
        var data = new TheoryData<string, string>();
        foreach (var document in Documents)
        {
            // A command a document gives twice is one case.
            foreach (var command in BashCommands(File.ReadAllText(Path.Combine(RepositoryPaths.Root, document))).Distinct(StringComparer.Ordinal))
            {
                data.Add(document, command);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Commands))]
    public void DocumentedCommand_IsRunByCiWordForWord(string document, string command)
    {
        var walkthrough = Normalize(File.ReadAllText(Path.Combine(RepositoryPaths.Root, "scripts", "walkthrough.sh")));
        var ci = Normalize(File.ReadAllText(Path.Combine(RepositoryPaths.Root, ".ci", "run")));
        // Whole words: `dotnet run --project src/DiagnosticScenarios` is not run by a run of src/DiagnosticScenarios.LoadRunner.
        var asWritten = new Regex($@"(^|\s){Regex.Escape(command)}(\s|$)", RegexOptions.Multiline);
        var run = asWritten.IsMatch(walkthrough) || asWritten.IsMatch(ci);

        Assert.True(run, $"{document} gives `{command}`, which neither scripts/walkthrough.sh nor .ci/run runs as written.");
    }

    [Fact]
    public void TheParse_FindsEachDocumentsCommands()
    {
        // The parse above finds each document's commands: an empty or tiny list would make the theory pass on nothing.
        var commands = Commands().Select(row => (string)row[1]).ToList();

        Assert.Contains("dotnet run -c Release --project src/DiagnosticScenarios --launch-profile http", commands);
        Assert.Contains("dotnet run --project src/DiagnosticScenarios", commands);
        Assert.Contains("dotnet run --project src/dotnet-blocking -- stacks -n DiagnosticScenarios --top 3", commands);
        Assert.Contains("dotnet run --project src/DiagnosticScenarios --launch-profile https", commands);
        Assert.Contains("dotnet tool install --global --source ./packages dotnet-blocking", commands);
        Assert.Contains(commands, c => c.StartsWith("dotnet tool run dotnet-trace -- collect -n DiagnosticScenarios --providers", StringComparison.Ordinal));
    }

    // The commands of a text's ```bash blocks: continuation lines joined, comments dropped, spaces collapsed.
    private static IEnumerable<string> BashCommands(string markdown) =>
        BashBlock().Matches(markdown)
            .SelectMany(block => Normalize(block.Groups[1].Value).Split('\n'))
            .Where(line => line.Length > 0);

    // What the scripts run, a line a command: continuations joined, comments (whole lines and trailing) and a check's
    // label dropped, so that a command merely quoted in a comment or a label does not count as run.
    private static string Normalize(string text)
    {
        var joined = text.Replace("\\\n", " ", StringComparison.Ordinal);
        return string.Join('\n', joined.Split('\n')
            .Where(line => !line.TrimStart().StartsWith('#'))
            .Select(line => Spaces().Replace(CheckLabel().Replace(TrailingComment().Replace(line, string.Empty), "check "), " ").Trim()));
    }

    // `check "label" COMMAND...` in scripts/walkthrough.sh: the label is prose.
    [GeneratedRegex(@"^\s*check\s+""[^""]*""\s*")]
    private static partial Regex CheckLabel();

    [GeneratedRegex(@"```bash\n(.*?)```", RegexOptions.Singleline)]
    private static partial Regex BashBlock();

    // A comment after a command (` # ...`); a '#' inside a word, as in a URL's fragment, is kept.
    [GeneratedRegex(@"\s+#\s.*$")]
    private static partial Regex TrailingComment();

    [GeneratedRegex(@"[ \t]+")]
    private static partial Regex Spaces();
}
