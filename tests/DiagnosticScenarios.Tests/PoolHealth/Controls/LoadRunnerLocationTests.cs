using DiagnosticScenarios.PoolHealth.Controls;

namespace DiagnosticScenarios.Tests.PoolHealth.Controls;

/// <summary>
/// Where the page's Start load finds the runner in each layout the app runs from: a published folder (the runner on a
/// shared framework, or carrying its runtime) and a build output. The walkthrough (scripts/walkthrough.sh) publishes the
/// app and loads it from the published folder; these pin the choice between the layouts.
/// </summary>
public sealed class LoadRunnerLocationTests : IDisposable
{
    private const string Runner = "DiagnosticScenarios.LoadRunner";
    private readonly string _root = Directory.CreateTempSubdirectory("runner-location-").FullName;

    [Fact]
    public void Published_RunnerOnASharedFramework_IsItsDllForDotnet()
    {
        var app = Folder("publish");
        // The runtimeconfig the runner's own build wrote, which names the shared framework it runs on.
        var published = Folder("publish", LoadRunnerLocation.PublishedFolder);
        File.Copy(Path.Combine(AppContext.BaseDirectory, Runner + ".runtimeconfig.json"), Path.Combine(published, Runner + ".runtimeconfig.json"));
        var dll = Touch(published, Runner + ".dll");
        Touch(published, Runner);

        Assert.Equal(dll, LoadRunnerLocation.BesideApp(app));
    }

    [Fact]
    public void Published_RunnerWithItsOwnRuntime_IsItsExecutable()
    {
        var app = Folder("publish");
        var published = Folder("publish", LoadRunnerLocation.PublishedFolder);
        // A self-contained publish lists the frameworks it includes instead of one to run on.
        File.WriteAllText(Path.Combine(published, Runner + ".runtimeconfig.json"),
            """{ "runtimeOptions": { "tfm": "net10.0", "includedFrameworks": [ { "name": "Microsoft.NETCore.App", "version": "10.0.0" } ] } }""");
        Touch(published, Runner + ".dll");
        var executable = Touch(published, Runner);

        Assert.Equal(executable, LoadRunnerLocation.BesideApp(app));
    }

    [Fact]
    public void Published_SingleFileRunner_IsItsExecutable()
    {
        var app = Folder("publish");
        var executable = Touch(Folder("publish", LoadRunnerLocation.PublishedFolder), Runner);

        Assert.Equal(executable, LoadRunnerLocation.BesideApp(app));
    }

    [Fact]
    public void BuildOutput_IsTheRunnerProjectsOutputForTheSameConfiguration()
    {
        var app = Folder("src", "DiagnosticScenarios", "bin", "Release", "net10.0");
        Touch(Folder("src", Runner, "bin", "Debug", "net10.0"), Runner + ".dll");
        var release = Touch(Folder("src", Runner, "bin", "Release", "net10.0"), Runner + ".dll");

        Assert.Equal(release, LoadRunnerLocation.BesideApp(app));
    }

    [Fact]
    public void Nowhere_NamesWhereAPublishWouldPutIt()
    {
        var app = Folder("copied");

        Assert.Null(LoadRunnerLocation.FromBuildLayout(app));
        Assert.Equal(Path.Combine(app, LoadRunnerLocation.PublishedFolder, Runner + ".dll"), LoadRunnerLocation.BesideApp(app));
    }

    // The folder is named twice, by the project file that publishes the runner and by the code that looks for it.
    [Fact]
    public void TheAppsProject_PublishesTheRunnerIntoTheFolderTheLookupReads()
    {
        var project = File.ReadAllText(Path.Combine(RepositoryPaths.AppProject, "DiagnosticScenarios.csproj"));

        Assert.Contains($"PublishDir=$([System.IO.Path]::GetFullPath('$(PublishDir)')){LoadRunnerLocation.PublishedFolder}/", project, StringComparison.Ordinal);
    }

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private string Folder(params string[] parts) => Directory.CreateDirectory(Path.Combine([_root, .. parts])).FullName;

    private static string Touch(string folder, string name)
    {
        var path = Path.Combine(folder, name);
        File.WriteAllBytes(path, []);
        return path;
    }
}
