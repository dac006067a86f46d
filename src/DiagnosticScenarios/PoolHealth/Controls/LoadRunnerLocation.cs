using System.Text.Json;
using DiagnosticScenarios.Hosting;

namespace DiagnosticScenarios.PoolHealth.Controls;

/// <summary>
/// Where the load runner is. The app does not load it: <c>LoadRunner:Path</c> names it; else a published app carries it
/// in <c>loadrunner/</c> beside itself (the app's project publishes it there); else the build layout does, the runner
/// project's output for the same configuration and framework as this app's
/// (<c>src/DiagnosticScenarios/bin/Debug/net10.0</c> → <c>src/DiagnosticScenarios.LoadRunner/bin/Debug/net10.0</c>).
/// </summary>
public static class LoadRunnerLocation
{
    public const string ConfigurationKey = "LoadRunner:Path";

    /// <summary>The folder of a published app that holds the runner, as the app's project file publishes it.</summary>
    public const string PublishedFolder = "loadrunner";

    private const string RunnerProject = "DiagnosticScenarios.LoadRunner";

    public static string Find(IConfiguration configuration) =>
        configuration[ConfigurationKey] is { Length: > 0 } configured ? configured : BesideApp(AppContext.BaseDirectory);

    /// <summary>
    /// The published runner when it is there, else the build layout's, else where a publish would have put it (so that
    /// the error names a place that can exist). A runner published to run on a shared framework is a .dll for
    /// <c>dotnet</c>; one that carries its runtime (self-contained, single-file) is its own executable.
    /// </summary>
    public static string BesideApp(string appDirectory)
    {
        var published = Path.Combine(appDirectory, PublishedFolder);
        var dll = Path.Combine(published, RunnerProject + ".dll");
        var executable = Path.Combine(published, RunnerProject + (OperatingSystem.IsWindows() ? ".exe" : ""));
        if (File.Exists(dll) && RunsOnSharedFramework(Path.ChangeExtension(dll, ".runtimeconfig.json")))
        {
            return dll;
        }

        if (File.Exists(executable))
        {
            return executable;
        }

        return FromBuildLayout(appDirectory) is { } built && File.Exists(built) ? built : dll;
    }

    /// <summary>The runner's build output for this app's build output, or null when the app is not in a <c>bin/CONFIGURATION/FRAMEWORK</c> folder.</summary>
    public static string? FromBuildLayout(string appDirectory) =>
        BuildLayout.Of(appDirectory) is { } layout ? Path.Combine(layout.OutputOf(RunnerProject), RunnerProject + ".dll") : null;

    // A runtimeconfig.json that names the framework(s) to run on; a self-contained app's names the ones it includes instead.
    private static bool RunsOnSharedFramework(string runtimeConfig)
    {
        if (!File.Exists(runtimeConfig))
        {
            return false;
        }

        using var document = JsonDocument.Parse(File.ReadAllText(runtimeConfig));
        return document.RootElement.TryGetProperty("runtimeOptions", out var options)
            && (options.TryGetProperty("framework", out _) || options.TryGetProperty("frameworks", out _));
    }
}
