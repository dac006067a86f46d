using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Scenarios.Mock;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// Whose code a module is, rule by rule, on real files: the runtime this test runs on, the test's own output folder and
/// its <c>.deps.json</c>, and copies of assemblies in a folder with no <c>.deps.json</c>, as a self-contained or
/// hand-copied app would have them. Each verdict carries the rule that decided it, which the report prints.
/// </summary>
public sealed class AppCodeTests : IDisposable
{
    private static readonly string CoreLib = typeof(object).Assembly.Location;

    // System.Linq lives beside CoreLib in the shared framework, and is signed with Microsoft's key.
    private static readonly string FrameworkAssembly = typeof(Enumerable).Assembly.Location;

    // A project of this repository: a project in the test's deps.json, and not strong-named.
    private static readonly string ProjectAssembly = typeof(StarvationScenariosController).Assembly.Location;

    private readonly string _bare = Directory.CreateTempSubdirectory("appcode-").FullName;
    private readonly ModuleReaders _modules = new();

    [Fact]
    public void AModuleInTheSharedFramework_IsNotTheApps()
    {
        var verdict = Decide(new AppCode([], CoreLib, _modules), FrameworkAssembly);

        Assert.False(verdict.IsApp);
        Assert.StartsWith("shared framework (", verdict.Rule, StringComparison.Ordinal);
        Assert.Contains($"{Path.DirectorySeparatorChar}shared{Path.DirectorySeparatorChar}", verdict.Rule, StringComparison.Ordinal);
    }

    [Fact]
    public void AModuleInTheNuGetCache_IsNotTheApps()
    {
        var path = Path.Combine(_bare, ".nuget", "packages", "northwind.data", "1.0.0", "lib", "net10.0", "Northwind.Data.dll");

        var verdict = Decide(new AppCode([], CoreLib, _modules), path);

        Assert.Equal((false, "NuGet package cache"), (verdict.IsApp, verdict.Rule));
    }

    [Fact]
    public void AToolsOwnModuleInTheNuGetCache_IsTheApps_ByTheDepsJsonBesideIt()
    {
        // dotnet tool run and dnx run a tool from the cache: tools/TFM/any/ holds its assemblies and its .deps.json.
        var depsFile = $"{typeof(AppCodeTests).Assembly.GetName().Name}.deps.json";
        var tool = Directory.CreateDirectory(Path.Combine(_bare, ".nuget", "packages", "northwind-sync", "1.0.0", "tools", "net10.0", "any")).FullName;
        File.Copy(Path.Combine(AppContext.BaseDirectory, depsFile), Path.Combine(tool, depsFile));
        var own = Path.Combine(tool, Path.GetFileName(ProjectAssembly));
        File.Copy(ProjectAssembly, own);

        var verdict = Decide(new AppCode([], CoreLib, _modules), own);

        Assert.Equal((true, $"project in {depsFile}"), (verdict.IsApp, verdict.Rule));
    }

    [Fact]
    public void AModuleBesideADepsJson_IsTheAppsWhenItIsAProject_AndNotWhenItIsAPackage()
    {
        var depsFile = $"{typeof(AppCodeTests).Assembly.GetName().Name}.deps.json";
        var app = new AppCode([], CoreLib, _modules);

        var project = Decide(app, ProjectAssembly);
        var package = Decide(app, typeof(FactAttribute).Assembly.Location);

        Assert.Equal((true, $"project in {depsFile}"), (project.IsApp, project.Rule));
        Assert.Equal((false, $"package in {depsFile}"), (package.IsApp, package.Rule));
    }

    [Fact]
    public void APackagesAssemblyForThisPlatformOnly_UnderRuntimes_IsNotTheApps_ByTheDepsJsonAboveIt()
    {
        // Microsoft.Data.SqlClient is loaded on Unix from runtimes/unix/lib/net9.0/, where no .deps.json lies; it is signed
        // with a key that is not among Microsoft's runtime keys, so only the deps.json's runtimeTargets tell it is a package.
        var depsFile = $"{typeof(AppCodeTests).Assembly.GetName().Name}.deps.json";
        var path = Path.Combine(AppContext.BaseDirectory, "runtimes", "unix", "lib", "net9.0", "Microsoft.Data.SqlClient.dll");
        Assert.True(File.Exists(path), $"{path}: the test's output no longer holds SqlClient's Unix assembly there");

        var verdict = Decide(new AppCode([], CoreLib, _modules), path);

        Assert.Equal((false, $"package in {depsFile}"), (verdict.IsApp, verdict.Rule));
    }

    [Fact]
    public void AModuleWithNoDepsJson_IsNotTheApps_WhenMicrosoftSignedIt()
    {
        var copy = CopyToBareFolder(FrameworkAssembly);

        var verdict = Decide(new AppCode([], CoreLib, _modules), copy);

        Assert.Equal((false, "signed with Microsoft's key (public key token b03f5f7f11d50a3a)"), (verdict.IsApp, verdict.Rule));
    }

    [Fact]
    public void AModuleWithNoDepsJson_IsTheApps_WhenNothingSaysOtherwise()
    {
        var copy = CopyToBareFolder(ProjectAssembly);

        var verdict = Decide(new AppCode([], CoreLib, _modules), copy);

        Assert.Equal((true, "not the runtime, the shared framework or a package"), (verdict.IsApp, verdict.Rule));
    }

    // A self-contained single-file app keeps the framework in its bundle: the trace names module files that are not on disk,
    // and the loader's events name each one's assembly, with its public key token.
    [Fact]
    public void AModuleWithNoFile_IsDecidedByItsIdentityInTheTrace()
    {
        var identities = new Dictionary<string, string>
        {
            [Path.Combine(_bare, "System.Private.CoreLib.dll")] = "System.Private.CoreLib, Version=10.0.0.0, Culture=neutral, PublicKeyToken=7cec85d7bea7798e",
            [Path.Combine(_bare, "Fabrikam.Stock.dll")] = "Fabrikam.Stock, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null",
        };
        var app = new AppCode([], CoreLib, _modules, identities.GetValueOrDefault);

        var framework = Decide(app, Path.Combine(_bare, "System.Private.CoreLib.dll"));
        var own = Decide(app, Path.Combine(_bare, "Fabrikam.Stock.dll"));

        Assert.Equal((false, "signed with Microsoft's key (public key token 7cec85d7bea7798e)"), (framework.IsApp, framework.Rule));
        Assert.Equal((true, "not the runtime, the shared framework or a package"), (own.IsApp, own.Rule));
    }

    [Fact]
    public void MethodsCompiledAtRunTime_AreNotTheApps()
    {
        var app = new AppCode([], CoreLib, _modules);

        Assert.False(app.IsApp(Frame("Anonymously Hosted DynamicMethods Assembly", null, "dynamicClass.lambda_method44")));
        Assert.Equal((false, "dynamic methods (compiled at run time, e.g. ASP.NET Core's invokers)"), (app.Verdicts.Single().IsApp, app.Verdicts.Single().Rule));
    }

    [Fact]
    public void AppPrefixes_OverrideTheRules_ByAssemblyNameOrByNamespace()
    {
        var app = new AppCode(["DiagnosticScenarios.Tests", "System.Linq.Parallel"], CoreLib, _modules);

        // A project, but not one of the names given: only the frames under the given namespaces are the app's.
        var project = Frame("DiagnosticScenarios", ProjectAssembly, "DiagnosticScenarios.Scenarios.Mock.StarvationScenariosController.TaskWait");
        var testAssembly = Frame("DiagnosticScenarios.Tests", typeof(AppCodeTests).Assembly.Location, "DiagnosticScenarios.Tests.BlockingAnalysis.AppCodeTests.Run");
        var underNamespace = Frame("System.Linq", FrameworkAssembly, "System.Linq.Parallel.QueryTask.Run");
        var besideNamespace = Frame("System.Linq", FrameworkAssembly, "System.Linq.ParallelEnumerable.ForAll");

        Assert.Equal([false, true, true, false], new[] { project, testAssembly, underNamespace, besideNamespace }.Select(app.IsApp));
        Assert.Equal("--app DiagnosticScenarios.Tests (assembly name)", app.Verdicts.Single(v => v.Module == "DiagnosticScenarios.Tests").Rule);
        // The framework module is reported as the app's for the frames the namespace took, not left saying "not the app's"
        // beside a site that names one of them; the project, with no frame under either name, stays outside.
        Assert.Equal(new ModuleVerdict("System.Linq", FrameworkAssembly, true, "--app System.Linq.Parallel (namespace): its frames under System.Linq.Parallel"),
            app.Verdicts.Single(v => v.Module == "System.Linq"));
        Assert.False(app.Verdicts.Single(v => v.Module == "DiagnosticScenarios").IsApp);
    }

    public void Dispose()
    {
        _modules.Dispose();
        Directory.Delete(_bare, recursive: true);
    }

    private static ModuleVerdict Decide(AppCode app, string path)
    {
        var module = Path.GetFileNameWithoutExtension(path);
        var isApp = app.IsApp(Frame(module, path, $"{module}.Type.Method"));
        var verdict = app.Verdicts.Single(v => v.Path == path);
        Assert.Equal(isApp, verdict.IsApp);
        return verdict;
    }

    private static TraceFrame Frame(string module, string? path, string method) => new($"{module}!{method}", module, path, method, 0);

    private string CopyToBareFolder(string assembly)
    {
        var copy = Path.Combine(_bare, Path.GetFileName(assembly));
        File.Copy(assembly, copy);
        return copy;
    }
}
