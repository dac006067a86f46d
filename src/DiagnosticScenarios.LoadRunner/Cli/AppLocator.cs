namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary>Finds a built DiagnosticScenarios app in the repository this runner sits in or is run from.</summary>
internal static class AppLocator
{
    public static string? FindDefault()
    {
        var candidates = new[] { Environment.CurrentDirectory, AppContext.BaseDirectory }
            .SelectMany(Ancestors)
            .Select(dir => Path.Combine(dir, "src", "DiagnosticScenarios", "bin"))
            .Where(Directory.Exists)
            .Distinct(StringComparer.Ordinal)
            .SelectMany(bin => Directory.EnumerateFiles(bin, "DiagnosticScenarios.dll", SearchOption.AllDirectories))
            .Where(dll => File.Exists(Path.ChangeExtension(dll, ".runtimeconfig.json")));

        // The most recently built configuration wins.
        return candidates.OrderByDescending(File.GetLastWriteTimeUtc).FirstOrDefault();
    }

    private static IEnumerable<string> Ancestors(string start)
    {
        for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
        {
            yield return dir.FullName;
        }
    }
}
