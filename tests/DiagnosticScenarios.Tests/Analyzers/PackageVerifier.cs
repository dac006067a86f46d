using System.Collections.Immutable;
using DiagnosticScenarios.Analyzers;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Testing;
using Microsoft.CodeAnalysis.Testing.Model;

namespace DiagnosticScenarios.Tests.Analyzers;

/// <summary>
/// Runs <see cref="BlockingAnalyzer"/> and <see cref="AwaitInsteadFix"/> with Roslyn's testing libraries over sources
/// marked up with the diagnostics they expect (<c>{|DSB001:call()|}</c>). Compiler errors fail a test: the code under test,
/// and the code a fix writes, must compile.
/// </summary>
internal static class PackageVerifier
{
    public static Task AnalyzeAsync(string source, ImmutableArray<MetadataReference>? references = null) =>
        new AnalyzerTest(references ?? OfflineReferences.Web) { TestCode = source }.RunAsync().DefaultTimeout();

    /// <summary>Applies every fix, one at a time and all at once, and compares with <paramref name="fixedSource"/>.</summary>
    /// <param name="reportedAtTheEnd">
    /// The diagnostics are reported at the end of the compilation (a method a handler calls): the testing library refuses to
    /// fix those unless told, as the IDE offers their fix only with full-solution analysis.
    /// </param>
    public static Task FixAsync(string source, string fixedSource, bool reportedAtTheEnd = false) =>
        new FixTest
        {
            TestCode = source,
            FixedCode = fixedSource,
            CodeFixTestBehaviors = reportedAtTheEnd ? CodeFixTestBehaviors.SkipLocalDiagnosticCheck : CodeFixTestBehaviors.None,
        }.RunAsync().DefaultTimeout();

    private sealed class AnalyzerTest(ImmutableArray<MetadataReference> references) : CSharpAnalyzerTest<BlockingAnalyzer, DefaultVerifier>
    {
        protected override async Task<Solution> CreateSolutionAsync(ProjectId projectId, EvaluatedProjectState projectState, CancellationToken cancellationToken) =>
            Offline(await CreateWorkspaceAsync(), projectId, projectState, CreateCompilationOptions(), CreateParseOptions(), references);
    }

    private sealed class FixTest : CSharpCodeFixTest<BlockingAnalyzer, AwaitInsteadFix, DefaultVerifier>
    {
        protected override async Task<Solution> CreateSolutionAsync(ProjectId projectId, EvaluatedProjectState projectState, CancellationToken cancellationToken) =>
            Offline(await CreateWorkspaceAsync(), projectId, projectState, CreateCompilationOptions(), CreateParseOptions(), OfflineReferences.Web);
    }

    // As the testing library builds its project, with the references given instead of the ones it would resolve through NuGet.
    private static Solution Offline(Workspace workspace, ProjectId projectId, EvaluatedProjectState state, CompilationOptions compilation, ParseOptions parse, ImmutableArray<MetadataReference> references) =>
        workspace.CurrentSolution
            .AddProject(projectId, state.Name, state.Name, state.Language)
            .WithProjectCompilationOptions(projectId, compilation.WithOutputKind(state.OutputKind))
            .WithProjectParseOptions(projectId, parse.WithDocumentationMode(state.DocumentationMode))
            .AddMetadataReferences(projectId, references);
}
