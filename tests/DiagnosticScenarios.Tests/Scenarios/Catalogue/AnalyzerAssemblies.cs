using System.Collections.Immutable;
using System.Reflection;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;

namespace DiagnosticScenarios.Tests.Scenarios.Catalogue;

/// <summary>
/// The analyzer and source-generator assemblies the build hands to the tests as assembly metadata (the test project's
/// <c>HandTheAnalyzerTableItsAssemblies</c> target), loaded the way the compiler loads them.
/// </summary>
internal static class AnalyzerAssemblies
{
    private static readonly IAnalyzerAssemblyLoader Loader = new PathLoader();

    /// <summary>The analyzers that report at least one of <paramref name="rules"/>, from the rule packages.</summary>
    public static ImmutableArray<DiagnosticAnalyzer> AnalyzersOf(IReadOnlyCollection<string> rules) =>
        [.. References("AnalyzerTable.Analyzer")
            .SelectMany(r => r.GetAnalyzers(LanguageNames.CSharp))
            .Where(a => a.SupportedDiagnostics.Any(d => rules.Contains(d.Id)))];

    /// <summary>The shared frameworks' source generators, as the app's build runs them.</summary>
    public static ImmutableArray<ISourceGenerator> Generators() =>
        [.. References("AnalyzerTable.Generator").SelectMany(r => r.GetGenerators(LanguageNames.CSharp))];

    private static IEnumerable<AnalyzerFileReference> References(string key)
    {
        var paths = typeof(AnalyzerAssemblies).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Where(a => a.Key == key)
            .Select(a => a.Value!)
            .ToList();
        if (paths.Count == 0)
        {
            throw new InvalidOperationException($"The test assembly names no {key} paths: the test project's HandTheAnalyzerTableItsAssemblies target did not run.");
        }

        return paths.Select(path =>
        {
            var reference = new AnalyzerFileReference(path, Loader);
            reference.AnalyzerLoadFailed += (_, e) => throw new InvalidOperationException($"{path}: {e.Message}", e.Exception);
            return reference;
        });
    }

    // Loading from the path also resolves an assembly's siblings in its folder (AsyncFixer, the Interop generators).
    // Roslyn itself comes from this test process, so the analyzers' types are the compiler's types.
    private sealed class PathLoader : IAnalyzerAssemblyLoader
    {
        public void AddDependencyLocation(string fullPath)
        {
        }

        public Assembly LoadFromPath(string fullPath) => Assembly.LoadFrom(fullPath);
    }
}
