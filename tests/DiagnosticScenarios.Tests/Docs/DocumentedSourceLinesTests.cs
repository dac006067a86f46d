using System.Text.RegularExpressions;

namespace DiagnosticScenarios.Tests.Docs;

/// <summary>
/// Every source line the documents cite (<c>LockScenarios.cs:27 `lock (Gate)`</c>, in the READMEs, the guides and the
/// recorded benchmarks) is the line the repository has now: a reader who opens the file at that line finds the code the
/// text quotes there, or, where the text quotes none, a line of code. A recording made before the scenario files changed
/// fails here until it is measured again.
/// </summary>
public sealed partial class DocumentedSourceLinesTests
{
    public static TheoryData<string, string> Citations()
    {
        var documents = new[] { Path.Combine(RepositoryPaths.Root, "README.md") }
            .Concat(new[] { "docs", "src" }.SelectMany(folder => Directory.EnumerateFiles(Path.Combine(RepositoryPaths.Root, folder), "*.md", SearchOption.AllDirectories)))
            .Where(path => !path.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj"));
        var data = new TheoryData<string, string>();
        foreach (var document in documents)
        {
            var lines = File.ReadAllLines(document);
            for (var i = 0; i < lines.Length; i++)
            {
                foreach (Match citation in Citation().Matches(lines[i]))
                {
                    // A file the compiler writes (a source generator's .g.cs) is not in the repository to check.
                    if (!citation.Groups["file"].Value.EndsWith(".g.cs", StringComparison.Ordinal))
                    {
                        data.Add($"{Path.GetRelativePath(RepositoryPaths.Root, document)}:{i + 1}", citation.Value);
                    }
                }
            }
        }

        return data;
    }

    [Fact]
    public void TheDocumentsCiteSourceLines()
    {
        // Without this the theory below could pass by finding nothing to check.
        Assert.True(Citations().Count() >= 10, $"only {Citations().Count()} citations found");
    }

    [Theory]
    [MemberData(nameof(Citations))]
    public void CitedSourceLine_IsTheRepositorysLineNow(string where, string citation)
    {
        var match = Citation().Match(citation);
        var file = match.Groups["file"].Value;
        var number = int.Parse(match.Groups["line"].Value, System.Globalization.CultureInfo.InvariantCulture);
        var candidates = new[] { "src", Path.Combine("tests", "fixtures") }
            .SelectMany(folder => Directory.EnumerateFiles(Path.Combine(RepositoryPaths.Root, folder), file, SearchOption.AllDirectories))
            .Where(path => !path.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj"))
            .ToList();
        Assert.True(candidates.Count == 1, $"{where}: {file} is {candidates.Count} files in src/ and tests/fixtures/");

        var source = File.ReadAllLines(candidates[0]);
        Assert.True(number >= 1 && number <= source.Length, $"{where}: {file} has {source.Length} lines, the text cites {number}");
        var line = source[number - 1].Trim();
        if (match.Groups["code"].Success)
        {
            // The diagnosis shortens a long statement with "…": each part it kept is on the line, in order.
            var at = 0;
            foreach (var part in match.Groups["code"].Value.Split('…', StringSplitOptions.RemoveEmptyEntries))
            {
                var found = line.IndexOf(part, at, StringComparison.Ordinal);
                Assert.True(found >= 0, $"{where}: {file}:{number} is `{line}`, the text quotes `{match.Groups["code"].Value}`");
                at = found + part.Length;
            }
        }
        else
        {
            Assert.True(line.Length > 0 && line is not ("{" or "}") && !line.StartsWith("//", StringComparison.Ordinal) && !line.StartsWith('#'),
                $"{where}: {file}:{number} is `{line}`, not a line of code");
        }
    }

    // File.cs:N, optionally closing a code span, optionally followed by the quoted code in a span of its own.
    [GeneratedRegex(@"(?<file>[A-Za-z_][\w.+-]*\.cs):(?<line>\d+)`?(?:\s+`(?<code>[^`\n]+)`)?")]
    private static partial Regex Citation();
}
