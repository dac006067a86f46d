using System.IO.Compression;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>The packed dotnet-blocking, as <c>dotnet tool install</c> downloads it.</summary>
public sealed class ToolPackageTests
{
    /// <summary>
    /// TraceEvent's Windows-only native libraries (ETW's KernelTraceControl, DIA's msdia140, three architectures each) stay
    /// out of the tool: most of its size unpacked, for code the diagnosis never calls.
    /// </summary>
    [Fact]
    public void Package_CarriesNoWindowsOnlyNativeLibraryOfTraceEvent()
    {
        var package = Assert.Single(Directory.GetFiles(DotnetBlockingTool.PackageFolder, "dotnet-blocking.*.nupkg"));

        using var zip = ZipFile.OpenRead(package);

        Assert.DoesNotContain(zip.Entries, e => e.Name.Equals("msdia140.dll", StringComparison.OrdinalIgnoreCase) || e.Name.Equals("KernelTraceControl.dll", StringComparison.OrdinalIgnoreCase));
    }

    /// <summary>
    /// docs/dotnet-blocking.md's other way: a local tool of the app's repository, in its tool manifest, run through <c>dotnet</c>. The
    /// packed folder is the only source, as in docs/dotnet-blocking.md's command.
    /// </summary>
    [Fact]
    public async Task Package_InstallsAsALocalToolOfARepository_AndRunsThroughDotnet()
    {
        var repository = Directory.CreateTempSubdirectory("local-tool-");
        try
        {
            async Task<ChildProcessResult> Dotnet(params string[] arguments)
            {
                var run = await ChildProcess.RunAsync(new ChildProcessStart("dotnet", arguments) { WorkingDirectory = repository.FullName }, TimeSpan.FromSeconds(90));
                Assert.True(run.ExitCode == 0, run.ToString());
                return run;
            }

            await Dotnet("new", "tool-manifest");
            await Dotnet("tool", "install", "--local", "--source", DotnetBlockingTool.PackageFolder, "dotnet-blocking");
            var help = await Dotnet("dotnet-blocking", "--help");

            // The SDK writes the manifest at the folder's root (.NET 10) or in .config/ (before).
            var manifest = await File.ReadAllTextAsync(Directory.EnumerateFiles(repository.FullName, "dotnet-tools.json", SearchOption.AllDirectories).Single());
            Assert.Contains("dotnet-blocking", manifest, StringComparison.Ordinal);
            Assert.Contains("stacks", help.Output, StringComparison.Ordinal);
            Assert.Contains("waits", help.Output, StringComparison.Ordinal);
            Assert.Contains("watch", help.Output, StringComparison.Ordinal);
        }
        finally
        {
            repository.Delete(recursive: true);
        }
    }
}
