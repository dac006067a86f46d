using System.Reflection;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Analyzers;

/// <summary>
/// The analyzer package as an app that is not this one installs it: packed to a folder, referenced by a
/// <c>PackageReference</c> from a copy of the Fabrikam.Stock fixture app, restored into a NuGet cache of its own (no copy of
/// an older build of the package to find), and its warnings printed by <c>dotnet build</c> at the app's blocking lines.
/// </summary>
[StartsEarly("dotnet pack, then dotnet build of a fixture app, as processes")]
public sealed class PackageInstallTests
{
#if DEBUG
    private const string BuildConfiguration = "Debug";
#else
    private const string BuildConfiguration = "Release";
#endif

    private static readonly string AnalyzerProject = Path.Combine(RepositoryPaths.Root, "src", "DiagnosticScenarios.Analyzers", "DiagnosticScenarios.Analyzers.csproj");

    private static readonly string FixtureApp = Path.Combine(typeof(PackageInstallTests).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "FixtureAppsFolder").Value!, "Fabrikam.Stock");

    [Fact]
    public async Task InstalledPackage_WarnsAtTheFixtureAppsBlockingLines_OnDotnetBuild()
    {
        var work = Directory.CreateTempSubdirectory("analyzer-package-");
        try
        {
            var (feed, app, packages) = (work.CreateSubdirectory("feed"), work.CreateSubdirectory("app"), work.CreateSubdirectory("packages"));
            // The test project's build has built the analyzer in this configuration; packing it again takes a second.
            await DotnetAsync(work.FullName, packages.FullName, "pack", AnalyzerProject, "--no-build", "-c", BuildConfiguration, "-o", feed.FullName);
            await CopyFixtureAsync(app.FullName, feed.FullName);

            var build = await DotnetAsync(app.FullName, packages.FullName, "build", "-nologo");

            // The minimal API handler's wait, the method group's wait, and the polling loop in the service the handler calls.
            Assert.Contains($"{Path.Combine(app.FullName, "Program.cs")}(18,17): warning DSB002:", build.Output, StringComparison.Ordinal);
            Assert.Contains($"{Path.Combine(app.FullName, "Reservations.cs")}(7,24): warning DSB002:", build.Output, StringComparison.Ordinal);
            Assert.Contains($"{Path.Combine(app.FullName, "Warehouse.cs")}(17,13): warning DSB003:", build.Output, StringComparison.Ordinal);
            Assert.True(Directory.Exists(Path.Combine(packages.FullName, "diagnosticscenarios.analyzers", "1.0.0")), "the app did not restore the package into its own cache");
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    // The fixture's sources and props as they are, its project file with the package added, and a nuget.config whose only
    // source is the packed folder: the Web SDK needs no other package, so the restore works offline.
    private static async Task CopyFixtureAsync(string app, string feed)
    {
        foreach (var source in Directory.EnumerateFiles(FixtureApp, "*.cs"))
        {
            File.Copy(source, Path.Combine(app, Path.GetFileName(source)));
        }

        File.Copy(Path.Combine(FixtureApp, "..", "Directory.Build.props"), Path.Combine(app, "Directory.Build.props"));
        var project = await File.ReadAllTextAsync(Path.Combine(FixtureApp, "Fabrikam.Stock.csproj")).DefaultTimeout();
        await File.WriteAllTextAsync(Path.Combine(app, "Fabrikam.Stock.csproj"), project.Replace(
            "</Project>",
            """
              <ItemGroup>
                <PackageReference Include="DiagnosticScenarios.Analyzers" Version="1.0.0" />
              </ItemGroup>

            </Project>
            """,
            StringComparison.Ordinal)).DefaultTimeout();
        await File.WriteAllTextAsync(Path.Combine(app, "nuget.config"), $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <clear />
                <add key="packed" value="{feed}" />
              </packageSources>
            </configuration>
            """).DefaultTimeout();
    }

    private static async Task<ChildProcessResult> DotnetAsync(string folder, string packages, params string[] arguments)
    {
        var run = await ChildProcess.RunAsync(
            new ChildProcessStart("dotnet", arguments)
            {
                WorkingDirectory = folder,
                Environment = new Dictionary<string, string?> { ["NUGET_PACKAGES"] = packages },
            },
            TimeSpan.FromSeconds(90));
        Assert.True(run.ExitCode == 0, run.ToString());
        return run;
    }
}
