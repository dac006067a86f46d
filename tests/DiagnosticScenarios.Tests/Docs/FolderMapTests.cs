using System.Text.RegularExpressions;

namespace DiagnosticScenarios.Tests.Docs;

/// <summary>
/// The folder map of docs/design.md is the repository's tree: every path it names is tracked, and a folder whose
/// subfolders it shows (the root always) shows every tracked subfolder, so a folder added, moved or renamed fails here
/// until the map says so.
/// </summary>
public sealed partial class FolderMapTests
{
    private static readonly string DesignPage = Path.Combine(RepositoryPaths.Root, "docs", "design.md");

    [Fact]
    public async Task EveryPathOfTheMap_IsTracked()
    {
        var tracked = await TrackedFiles.PathsAsync();
        var files = tracked.ToHashSet(StringComparer.Ordinal);
        var folders = TrackedFiles.FoldersOf(tracked);

        var missing = Map().Where(entry => !(entry.Path.EndsWith('/') ? folders.Contains(entry.Path) : files.Contains(entry.Path))).ToList();

        Assert.True(missing.Count == 0, $"docs/design.md's map names what the repository does not track: {string.Join(", ", missing.Select(e => e.Path))}");
    }

    [Fact]
    public async Task AFolderWhoseSubfoldersTheMapShows_ShowsThemAll()
    {
        var folders = TrackedFiles.FoldersOf(await TrackedFiles.PathsAsync());
        var map = Map();
        var shown = map.Select(entry => entry.Parent + entry.Name.Split('/')[0] + (entry.Name.Contains('/') ? "/" : string.Empty)).ToHashSet(StringComparer.Ordinal);
        var expanded = map.Select(entry => entry.Parent).ToHashSet(StringComparer.Ordinal);

        var unmapped = folders
            .Where(folder => expanded.Contains(Parent(folder)) && !shown.Contains(folder))
            .Order(StringComparer.Ordinal)
            .ToList();

        Assert.True(unmapped.Count == 0, $"docs/design.md's map leaves out: {string.Join(", ", unmapped)}");
    }

    [Fact]
    public void TheMap_IsFoundAndNested()
    {
        var map = Map();

        // Without this the two tests above could pass on a map the parse did not find.
        Assert.True(map.Count >= 20, $"only {map.Count} entries in docs/design.md's map");
        Assert.Contains(map, entry => entry.Path == "src/DiagnosticScenarios/PoolHealth/Detection/");
    }

    private static string Parent(string folder)
    {
        var trimmed = folder.TrimEnd('/');
        var slash = trimmed.LastIndexOf('/');
        return slash < 0 ? string.Empty : trimmed[..(slash + 1)];
    }

    /// <summary>
    /// The first ```text block under "## The folders": a line per entry, its path first, indented two spaces under the
    /// folder it is in; a folder's path ends with '/'. The rest of the line describes it.
    /// </summary>
    private static List<MapEntry> Map()
    {
        var page = File.ReadAllText(DesignPage).Replace("\r\n", "\n", StringComparison.Ordinal);
        var section = page.IndexOf("\n## The folders\n", StringComparison.Ordinal);
        Assert.True(section >= 0, "docs/design.md has no \"## The folders\" section");
        var block = TextBlock().Match(page, section);
        Assert.True(block.Success, "docs/design.md's \"The folders\" has no ```text block");

        var entries = new List<MapEntry>();
        var stack = new List<string>();
        foreach (var line in block.Groups["body"].Value.Split('\n').Where(line => line.Trim().Length > 0))
        {
            var depth = (line.Length - line.TrimStart(' ').Length) / 2;
            Assert.True(depth <= stack.Count, $"docs/design.md's map indents `{line.Trim()}` under no folder");
            stack.RemoveRange(depth, stack.Count - depth);
            var name = line.Trim().Split(' ')[0];
            var parent = string.Concat(stack);
            entries.Add(new MapEntry(parent, name));
            if (name.EndsWith('/'))
            {
                stack.Add(name);
            }
        }

        return entries;
    }

    private sealed record MapEntry(string Parent, string Name)
    {
        public string Path => Parent + Name;
    }

    [GeneratedRegex(@"```text\n(?<body>.*?)```", RegexOptions.Singleline)]
    private static partial Regex TextBlock();
}
