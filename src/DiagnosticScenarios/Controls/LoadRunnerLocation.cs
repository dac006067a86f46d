namespace DiagnosticScenarios.Controls;

/// <summary>
/// Where the load runner is. The app does not carry it: <c>LoadRunner:Path</c> names it, or else the build layout
/// does, the runner project's output for the same configuration and framework as this app's
/// (<c>src/DiagnosticScenarios/bin/Debug/net10.0</c> → <c>src/DiagnosticScenarios.LoadRunner/bin/Debug/net10.0</c>).
/// </summary>
internal static class LoadRunnerLocation
{
    public const string ConfigurationKey = "LoadRunner:Path";
    private const string RunnerProject = "DiagnosticScenarios.LoadRunner";

    public static string Find(IConfiguration configuration) =>
        configuration[ConfigurationKey] is { Length: > 0 } configured ? configured : FromBuildLayout(AppContext.BaseDirectory);

    internal static string FromBuildLayout(string appDirectory)
    {
        var framework = new DirectoryInfo(Path.TrimEndingDirectorySeparator(appDirectory));
        var buildConfiguration = framework.Parent;
        var project = buildConfiguration?.Parent?.Parent;
        return project?.Parent is { } sources
            ? Path.Combine(sources.FullName, RunnerProject, "bin", buildConfiguration!.Name, framework.Name, RunnerProject + ".dll")
            : Path.Combine(appDirectory, RunnerProject + ".dll");
    }
}
