namespace DiagnosticScenarios.Hosting;

/// <summary>
/// Where a build put the app: <c>SOURCES/PROJECT/bin/CONFIGURATION/FRAMEWORK</c> (<c>src/DiagnosticScenarios/bin/Debug/net10.0</c>).
/// A published or copied app is in no such folder.
/// </summary>
/// <param name="Sources">The folder that holds the projects (<c>src</c>).</param>
/// <param name="Configuration">Debug, Release, ...</param>
/// <param name="Framework">net10.0, ...</param>
public sealed record BuildLayout(string Sources, string Configuration, string Framework)
{
    /// <summary>The build layout <paramref name="appDirectory"/> is in; null when it is in none.</summary>
    public static BuildLayout? Of(string appDirectory)
    {
        var framework = new DirectoryInfo(Path.TrimEndingDirectorySeparator(appDirectory));
        var configuration = framework.Parent;
        return configuration?.Parent is { Name: "bin", Parent.Parent: { } sources }
            ? new BuildLayout(sources.FullName, configuration.Name, framework.Name)
            : null;
    }

    /// <summary>Another project's output of the same configuration and framework.</summary>
    public string OutputOf(string project) => Path.Combine(Sources, project, "bin", Configuration, Framework);
}
