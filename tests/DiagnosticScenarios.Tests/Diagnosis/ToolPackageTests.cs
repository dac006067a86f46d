using System.IO.Compression;
using System.Xml.Linq;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>
/// <c>dotnet pack</c> makes the CLI's tool package, as the README shows it (the tests install the one every build packs:
/// see <see cref="DotnetBlockingTool"/>). Packing once failed while the build packed too.
/// </summary>
public sealed class ToolPackageTests : IDisposable
{
    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("dotnet-blocking-pack-");

    [Fact]
    public async Task DotnetPack_MakesAToolPackage_WhoseCommandIsDotnetBlocking()
    {
        var project = Path.Combine(RepositoryPaths.Root, "src", "DiagnosticScenarios.Diagnose", "DiagnosticScenarios.Diagnose.csproj");
        // The CLI the test project's build built, in its configuration: packed, not built again.
        var configuration = Path.GetFileName(DotnetBlockingTool.PackageFolder);

        var pack = await ChildProcess.RunAsync(
            new ChildProcessStart("dotnet", ["pack", project, "--no-build", "-c", configuration, "-o", _folder.FullName]) { WorkingDirectory = _folder.FullName },
            TimeSpan.FromSeconds(60));

        Assert.True(pack.ExitCode == 0, pack.ToString());
        var package = Assert.Single(_folder.GetFiles("dotnet-blocking.*.nupkg"));
        await using var zip = await ZipFile.OpenReadAsync(package.FullName).DefaultTimeout();
        var settings = zip.Entries.Single(e => e.Name == "DotnetToolSettings.xml");
        await using var stream = await settings.OpenAsync().DefaultTimeout();
        var command = (await XDocument.LoadAsync(stream, LoadOptions.None, CancellationToken.None).DefaultTimeout()).Descendants("Command").Single();
        Assert.Equal("dotnet-blocking", command.Attribute("Name")?.Value);
    }

    public void Dispose() => _folder.Delete(recursive: true);
}
