using System.Runtime.InteropServices;

namespace DiagnosticScenarios.Common;

/// <summary>The .NET host (<c>dotnet</c>) that starts a framework-dependent app's assembly for the app, the load runner and the tests.</summary>
public static class DotnetHost
{
    private const string Name = "dotnet";
    private static readonly string Executable = OperatingSystem.IsWindows() ? Name + ".exe" : Name;

    /// <summary>Whether <paramref name="path"/> (an executable's path or a command line's first word) is the .NET host.</summary>
    public static bool IsHost(string? path) => path is not null && Path.GetFileNameWithoutExtension(path) == Name;

    /// <summary>The host to start a framework-dependent assembly with: <see cref="Find"/>, else whichever <c>dotnet</c> the PATH holds.</summary>
    public static string Command => Find() ?? Name;

    /// <summary>
    /// The host running this process (<c>dotnet app.dll</c>, a test host), else the one beside the shared runtime this
    /// process runs on (<c>DOTNET_ROOT/shared/Microsoft.NETCore.App/VERSION/</c>), else the one the SDK names in
    /// <c>DOTNET_HOST_PATH</c>; null when none is known (a self-contained app started outside the SDK).
    /// </summary>
    public static string? Find()
    {
        if (Environment.ProcessPath is { } host && IsHost(host))
        {
            return host;
        }

        var beside = Path.GetFullPath(Path.Combine(RuntimeEnvironment.GetRuntimeDirectory(), "..", "..", "..", Executable));
        return File.Exists(beside) ? beside : Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
    }
}
