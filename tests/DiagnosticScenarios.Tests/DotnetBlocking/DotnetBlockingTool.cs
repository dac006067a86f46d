using System.Reflection;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// The CLI installed as the field installs tools: <c>dotnet tool install --tool-path DIR --source PACKDIR dotnet-blocking</c>
/// from the package the CLI's build packs, into a folder of its own.
/// </summary>
internal static class DotnetBlockingTool
{
    /// <summary>Where the CLI's build packs it (the test project's build records the folder).</summary>
    public static string PackageFolder { get; } = typeof(DotnetBlockingTool).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "DotnetBlockingPackageFolder").Value!;

    /// <summary>Installs the tool into a folder of its own, which goes when the answer is disposed.</summary>
    public static async Task<InstalledTool> InstallAsync()
    {
        var folder = Directory.CreateTempSubdirectory("dotnet-blocking-tool-");
        try
        {
            // --source: the packed folder is the only source, as in docs/dotnet-blocking.md; the install reads nothing from a registry.
            var tools = Path.Combine(folder.FullName, "tools");
            var install = await ChildProcess.RunAsync(
                new ChildProcessStart("dotnet", ["tool", "install", "--tool-path", tools, "--source", PackageFolder, "dotnet-blocking"]) { WorkingDirectory = folder.FullName },
                TimeSpan.FromSeconds(60));
            Assert.True(install.ExitCode == 0, install.ToString());
            return new InstalledTool(folder, Path.Combine(tools, OperatingSystem.IsWindows() ? "dotnet-blocking.exe" : "dotnet-blocking"));
        }
        catch
        {
            folder.Delete(recursive: true);
            throw;
        }
    }
}

/// <summary>The installed command, in a folder deleted on dispose (the tool and the libraries it carries).</summary>
internal sealed class InstalledTool(DirectoryInfo folder, string command) : IDisposable
{
    public string Command { get; } = command;

    public void Dispose() => folder.Delete(recursive: true);
}
