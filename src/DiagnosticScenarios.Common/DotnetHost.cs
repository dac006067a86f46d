using System.Runtime.InteropServices;

namespace DiagnosticScenarios.Common;

/// <summary>The .NET host (<c>dotnet</c>) that starts a framework-dependent app's assembly for the app, the load runner and the tests.</summary>
public static class DotnetHost
{
    private static readonly string Executable = OperatingSystem.IsWindows() ? "dotnet.exe" : "dotnet";

    /// <summary>
    /// The host running this process (<c>dotnet app.dll</c>, a test host), else the one beside the shared runtime this
    /// process runs on (<c>DOTNET_ROOT/shared/Microsoft.NETCore.App/VERSION/</c>), else the one the SDK names in
    /// <c>DOTNET_HOST_PATH</c>; null when none is known (a self-contained app started outside the SDK).
    /// </summary>
    public static string? Find()
    {
        if (Environment.ProcessPath is { } host && Path.GetFileName(host) == Executable)
        {
            return host;
        }

        var beside = Path.GetFullPath(Path.Combine(RuntimeEnvironment.GetRuntimeDirectory(), "..", "..", "..", Executable));
        return File.Exists(beside) ? beside : Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
    }
}
