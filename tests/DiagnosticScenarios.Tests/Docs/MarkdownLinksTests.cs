namespace DiagnosticScenarios.Tests.Docs;

/// <summary>
/// Every relative link of every tracked Markdown file reaches a tracked file or folder, and every <c>#anchor</c> into a
/// Markdown file is one of its headings' anchors as GitHub makes them. The pages <c>compare</c> writes into
/// docs/benchmarks/ are checked too: their one link, to their chart, complies.
/// </summary>
public sealed class MarkdownLinksTests
{
    [Fact]
    public async Task EveryRelativeLinkAndAnchor_OfEveryTrackedMarkdownFile_Resolves()
    {
        var tracked = await TrackedFiles.PathsAsync();
        var files = tracked.ToHashSet(StringComparer.Ordinal);
        var folders = TrackedFiles.FoldersOf(tracked);
        var documents = tracked.Where(path => path.EndsWith(".md", StringComparison.Ordinal)).ToList();
        var anchors = new Dictionary<string, IReadOnlyList<string>>(StringComparer.Ordinal);
        IReadOnlyList<string> AnchorsOf(string document) =>
            anchors.TryGetValue(document, out var known) ? known : anchors[document] = MarkdownLinks.Anchors(Read(document));

        var broken = new List<string>();
        var checkedLinks = 0;
        foreach (var document in documents)
        {
            foreach (var link in MarkdownLinks.Links(Read(document)).Where(link => IsRelative(link.Target)))
            {
                checkedLinks++;
                var problem = Problem(document, link.Target, files, folders, AnchorsOf);
                if (problem is not null)
                {
                    broken.Add($"{document}:{link.Line}: ({link.Target}) {problem}");
                }
            }
        }

        Assert.True(documents.Count >= 10 && checkedLinks >= 50, $"only {checkedLinks} relative links in {documents.Count} Markdown files: the parse finds too little");
        Assert.True(broken.Count == 0, $"{broken.Count} broken links:{Environment.NewLine}{string.Join(Environment.NewLine, broken)}");
    }

    [Theory]
    [InlineData("Quick start", "quick-start")]
    [InlineData("Find the blocking code: `dotnet-blocking`", "find-the-blocking-code-dotnet-blocking")]
    [InlineData("The runtime's view: who helps, who sees", "the-runtimes-view-who-helps-who-sees")]
    [InlineData("3. Load taskwait (sync-over-async, `.Result`)", "3-load-taskwait-sync-over-async-result")]
    [InlineData("What SetMinThreads buys, and what it costs", "what-setminthreads-buys-and-what-it-costs")]
    [InlineData("ping_at saturation — wrk", "ping_at-saturation--wrk")]
    [InlineData("[The page](docs/live-page.md) itself", "the-page-itself")]
    public void Slug_IsGitHubsAnchorForTheHeading(string heading, string anchor) =>
        Assert.Equal(anchor, MarkdownLinks.Slug(heading));

    [Fact]
    public void Anchors_NumberARepeatedHeading_AndIgnoreHeadingsInCode()
    {
        const string markdown = "# Usage\n\n## Usage\n\n```bash\n# not a heading\n```\n\n### Usage\n";

        Assert.Equal(["usage", "usage-1", "usage-2"], MarkdownLinks.Anchors(markdown));
    }

    [Fact]
    public void Links_AreFoundInProse_NotInCode()
    {
        const string markdown = "See [the page](docs/a.md#b) and ![chart](c.svg \"title\").\n\n`[not](a link)`\n\n```text\n[nor](this)\n```\n\n[ref]: docs/d.md\n";

        Assert.Equal(["docs/a.md#b", "c.svg", "docs/d.md"], MarkdownLinks.Links(markdown).Select(link => link.Target));
    }

    private static string Read(string document) => File.ReadAllText(Path.Combine(RepositoryPaths.Root, document));

    // Not a URL with a scheme (https:, mailto:) nor one that names its host (//host/...).
    private static bool IsRelative(string target) =>
        target.Length > 0 && !target.StartsWith("//", StringComparison.Ordinal) && !System.Text.RegularExpressions.Regex.IsMatch(target, "^[A-Za-z][A-Za-z0-9+.-]*:");

    private static string? Problem(string document, string target, HashSet<string> files, IReadOnlySet<string> folders, Func<string, IReadOnlyList<string>> anchorsOf)
    {
        var hash = target.IndexOf('#', StringComparison.Ordinal);
        var path = Uri.UnescapeDataString(hash < 0 ? target : target[..hash]);
        var anchor = hash < 0 ? null : target[(hash + 1)..];
        var resolved = path.Length == 0 ? document : Resolve(document, path);
        if (resolved is null)
        {
            return "leaves the repository";
        }

        var isFile = files.Contains(resolved);
        if (!isFile && !folders.Contains(resolved.TrimEnd('/') + "/"))
        {
            return $"{resolved} is no tracked file or folder";
        }

        if (anchor is not null && isFile && resolved.EndsWith(".md", StringComparison.Ordinal) && !anchorsOf(resolved).Contains(anchor))
        {
            return $"{resolved} has no heading whose anchor is #{anchor}";
        }

        return null;
    }

    // The target's path from the repository's root: relative to the document's folder, or to the root when it starts with '/'.
    private static string? Resolve(string document, string path)
    {
        var parts = new List<string>();
        if (!path.StartsWith('/'))
        {
            parts.AddRange(document.Split('/')[..^1]);
        }

        foreach (var part in path.Split('/', StringSplitOptions.RemoveEmptyEntries))
        {
            if (part == "..")
            {
                if (parts.Count == 0)
                {
                    return null;
                }

                parts.RemoveAt(parts.Count - 1);
            }
            else if (part != ".")
            {
                parts.Add(part);
            }
        }

        return string.Join('/', parts);
    }
}
