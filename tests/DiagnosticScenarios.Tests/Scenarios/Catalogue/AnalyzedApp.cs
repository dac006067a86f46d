using System.Collections.Concurrent;
using System.Reflection;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Analyzers;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;

namespace DiagnosticScenarios.Tests.Scenarios.Catalogue;

/// <summary>
/// The app's source compiled in process with Roslyn, with the analyzers of <see cref="AnalyzerRules.All"/> turned on
/// over the files that hold the scenarios' code, this repository's (<see cref="AnalyzerRules.ThisPackage"/>) over the whole
/// app as its build runs it, and what they report. Once per test class: it takes seconds of CPU.
/// </summary>
/// <remarks>
/// The scenarios suppress their deliberate anti-patterns with <c>#pragma warning disable</c>. Those suppressions are
/// counted, not stripped: <c>reportSuppressedDiagnostics</c> hands back every suppressed diagnostic marked as such, so the
/// source stays byte for byte the file a reader opens (lines in failure messages are the file's lines) and no rewriting
/// of the pragmas can change what the analyzers see.
/// </remarks>
public sealed class AnalyzedApp : IAsyncLifetime
{
    public Compilation Compilation { get; private set; } = null!;

    /// <summary>Every diagnostic of the rules, suppressed ones included.</summary>
    public IReadOnlyList<Diagnostic> Findings { get; private set; } = [];

    // The language version the SDK gives net10.0, and the interceptor namespaces the app's build allows (the OpenAPI
    // package's props and the Web SDK's): generated interceptors elsewhere fail the compilation (CS9137), loudly.
    private static readonly CSharpParseOptions ParseOptions = new CSharpParseOptions(LanguageVersion.CSharp14)
        .WithFeatures([KeyValuePair.Create("InterceptorsNamespaces", "Microsoft.AspNetCore.OpenApi.Generated;Microsoft.Extensions.Validation.Generated")]);

    public async Task InitializeAsync()
    {
        var compilation = CSharpCompilation.Create(
            typeof(ScenarioCatalogue).Assembly.GetName().Name,
            await SourceTreesAsync(),
            References(),
            new CSharpCompilationOptions(
                OutputKind.ConsoleApplication,
                nullableContextOptions: NullableContextOptions.Enable,
                specificDiagnosticOptions: AnalyzerRules.All.Concat(AnalyzerRules.ThisPackage).Select(rule => KeyValuePair.Create(rule, ReportDiagnostic.Warn))));

        CSharpGeneratorDriver.Create(AnalyzerAssemblies.Generators(), parseOptions: ParseOptions)
            .RunGeneratorsAndUpdateCompilation(compilation, out var generated, out var generatorDiagnostics);
        Compilation = generated;

        var analyzers = AnalyzerAssemblies.AnalyzersOf(AnalyzerRules.All);
        var unserved = AnalyzerRules.All.Where(rule => !analyzers.Any(a => a.SupportedDiagnostics.Any(d => d.Id == rule))).ToList();
        if (unserved.Count > 0)
        {
            throw new InvalidOperationException($"No loaded analyzer reports {string.Join(", ", unserved)}: the table would call them silent.");
        }

        // Only the files the table reads: each scenario's method and the code its BAD lines mark (the tutorial's in the
        // classes its actions call); the rest of the app is bound only as far as their code needs it.
        var trees = ScenarioCatalogue.Scenarios
            .SelectMany(scenario => scenario.Verdict == ScenarioVerdict.Bad
                ? ScenarioCode.BadCode(generated, scenario).Append(ScenarioCode.Body(generated, scenario))
                : [ScenarioCode.Body(generated, scenario)])
            .Select(node => node.SyntaxTree)
            .Distinct()
            .ToList();
        var analyzerFailures = new ConcurrentBag<string>();
        var withAnalyzers = generated.WithAnalyzers(analyzers, new CompilationWithAnalyzersOptions(
            new AnalyzerOptions([]),
            onAnalyzerException: (exception, analyzer, _) => analyzerFailures.Add($"{analyzer}: {exception.Message}"),
            concurrentAnalysis: true,
            logAnalyzerExecutionTime: false,
            reportSuppressedDiagnostics: true));
        // The files side by side: the class's fixture is often the last of the functional tests to end.
        var perTree = await Task.WhenAll(trees.Select(tree => Task.Run(async () =>
        {
            var model = generated.GetSemanticModel(tree);
            return model.GetDiagnostics()
                .Concat(await withAnalyzers.GetAnalyzerSemanticDiagnosticsAsync(model, filterSpan: null, CancellationToken.None))
                .Concat(await withAnalyzers.GetAnalyzerSyntaxDiagnosticsAsync(tree, CancellationToken.None))
                .ToList();
        }))).TimeoutAfter(TimeSpan.FromMinutes(2));
        // This package's findings in the methods a handler calls are compilation-end diagnostics: the whole app is analysed.
        var thisPackage = await generated.WithAnalyzers([new BlockingAnalyzer()], new CompilationWithAnalyzersOptions(
                new AnalyzerOptions([]),
                onAnalyzerException: (exception, analyzer, _) => analyzerFailures.Add($"{analyzer}: {exception.Message}"),
                concurrentAnalysis: true,
                logAnalyzerExecutionTime: false,
                reportSuppressedDiagnostics: true))
            .GetAnalyzerDiagnosticsAsync(CancellationToken.None).TimeoutAfter(TimeSpan.FromMinutes(2));
        var diagnostics = generated.GetDeclarationDiagnostics().Concat(perTree.SelectMany(d => d)).Concat(thisPackage).ToList();

        // A reference set that does not resolve every type must not pass as "no analyzer flags it".
        var failures = generatorDiagnostics.Where(d => d.Severity >= DiagnosticSeverity.Warning)
            .Concat(diagnostics.Where(d => d.Severity == DiagnosticSeverity.Error && !d.IsSuppressed))
            .Select(d => d.ToString())
            .Concat(analyzerFailures)
            .ToList();
        if (failures.Count > 0)
        {
            throw new InvalidOperationException($"The app's source did not compile and analyse cleanly:{Environment.NewLine}{string.Join(Environment.NewLine, failures.Take(20))}");
        }

        Findings = [.. diagnostics.Where(d => AnalyzerRules.All.Contains(d.Id) || AnalyzerRules.ThisPackage.Contains(d.Id))];
    }

    public Task DisposeAsync() => Task.CompletedTask;

    // The app's own files and the global usings its build generated for ImplicitUsings (see the test project file).
    private static async Task<IEnumerable<SyntaxTree>> SourceTreesAsync()
    {
        var files = Directory.EnumerateFiles(RepositoryPaths.AppProject, "*.cs", SearchOption.AllDirectories)
            .Where(path => !IsBuildOutput(Path.GetRelativePath(RepositoryPaths.AppProject, path)))
            .Append(AppGlobalUsings());
        var trees = await Task.WhenAll(files.Select(async path =>
            CSharpSyntaxTree.ParseText(await File.ReadAllTextAsync(path).DefaultTimeout(), ParseOptions, path)));
        return trees;
    }

    private static bool IsBuildOutput(string relativePath) =>
        relativePath.Split(Path.DirectorySeparatorChar)[0] is "obj" or "bin";

    private static string AppGlobalUsings()
    {
        var path = typeof(AnalyzedApp).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == "DiagnosticScenariosGlobalUsingsPath").Value!;
        return File.Exists(path) ? path : throw new FileNotFoundException("The app's build wrote no global usings file; build the app first.", path);
    }

    // The test host's trusted platform assemblies: both shared frameworks (this project references the web app) and the
    // app's packages. The app's own assembly is left out: its source is what is compiled.
    private static IEnumerable<MetadataReference> References()
    {
        var app = typeof(ScenarioCatalogue).Assembly.GetName().Name;
        return ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!)
            .Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Where(path => Path.GetFileNameWithoutExtension(path) != app)
            .Select(path => MetadataReference.CreateFromFile(path));
    }
}
