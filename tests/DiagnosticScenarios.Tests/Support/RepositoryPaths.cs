namespace DiagnosticScenarios.Tests.Support;

/// <summary>Where the repository's files are, found from the test assembly's folder.</summary>
internal static class RepositoryPaths
{
    public static string Root { get; } = FindRoot();

    public static string AppProject { get; } = Path.Combine(Root, "src", "DiagnosticScenarios");

    private static string FindRoot()
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "DiagnosticScenarios.sln")))
        {
            directory = directory.Parent;
        }

        return directory?.FullName ?? throw new InvalidOperationException($"No DiagnosticScenarios.sln above {AppContext.BaseDirectory}.");
    }
}
