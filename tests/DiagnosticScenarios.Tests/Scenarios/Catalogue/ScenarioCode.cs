using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace DiagnosticScenarios.Tests.Scenarios.Catalogue;

/// <summary>
/// A scenario's code in the app's compilation, found from the catalogue alone: the method its <see cref="Scenario.Action"/>
/// names (<c>Type.Method</c>, any type), and in it the code each <c>// BAD:</c> comment marks.
/// </summary>
internal static class ScenarioCode
{
    private const string BadMarker = "// BAD:";

    /// <summary>The body of the method that serves <paramref name="scenario"/>.</summary>
    public static SyntaxNode Body(Compilation compilation, Scenario scenario) => BodyOf(Method(compilation, scenario));

    /// <summary>
    /// The code the <c>// BAD:</c> comments mark, in the scenario's method or, when it has none, in the nearest app
    /// methods it calls (the tutorial's deadlock and leak live in classes the action calls).
    /// </summary>
    public static IReadOnlyList<SyntaxNode> BadCode(Compilation compilation, Scenario scenario)
    {
        var method = Method(compilation, scenario);
        var seen = new HashSet<BaseMethodDeclarationSyntax> { method };
        IReadOnlyList<BaseMethodDeclarationSyntax> methods = [method];
        while (methods.Count > 0)
        {
            var marked = methods.SelectMany(m => MarkedIn(BodyOf(m))).ToList();
            if (marked.Count > 0)
            {
                return marked;
            }

            methods = [.. methods.SelectMany(m => Callees(compilation, m)).Where(seen.Add)];
        }

        throw new InvalidOperationException(
            $"{Describe(scenario)}: no {BadMarker} comment in {scenario.Action} nor in any app method it calls.");
    }

    /// <summary><c>File.cs:line</c> of a node, for failure messages.</summary>
    public static string FileLine(SyntaxNode node)
    {
        var span = node.GetLocation().GetLineSpan();
        return $"{Path.GetFileName(span.Path)}:{span.StartLinePosition.Line + 1}";
    }

    public static string Describe(Scenario scenario) => $"{scenario.Family}/{scenario.Name} ({scenario.Action})";

    private static BaseMethodDeclarationSyntax Method(Compilation compilation, Scenario scenario)
    {
        var dot = scenario.Action.LastIndexOf('.');
        var (typeName, methodName) = (scenario.Action[..dot], scenario.Action[(dot + 1)..]);
        var methods = compilation.GetSymbolsWithName(typeName, SymbolFilter.Type)
            .OfType<INamedTypeSymbol>()
            .SelectMany(type => type.GetMembers(methodName))
            .OfType<IMethodSymbol>()
            .SelectMany(m => m.DeclaringSyntaxReferences)
            .Select(r => r.GetSyntax())
            .OfType<BaseMethodDeclarationSyntax>()
            .ToList();
        return methods.Count == 1
            ? methods[0]
            : throw new InvalidOperationException($"{Describe(scenario)}: {methods.Count} methods in the app's source match {scenario.Action}, not one.");
    }

    private static SyntaxNode BodyOf(BaseMethodDeclarationSyntax method) =>
        (SyntaxNode?)method.Body ?? method.ExpressionBody ?? throw new InvalidOperationException($"{FileLine(method)}: the method has no body.");

    /// <summary>The code each <c>// BAD:</c> comment in <paramref name="body"/> marks (syntax alone, no compilation).</summary>
    public static IEnumerable<SyntaxNode> MarkedIn(SyntaxNode body) =>
        body.DescendantTrivia()
            .Where(t => t.IsKind(SyntaxKind.SingleLineCommentTrivia) && t.ToString().StartsWith(BadMarker, StringComparison.Ordinal))
            .Select(MarkedBy);

    // The statement the comment stands above, lambdas and blocks included; a comment inside an expression (above the
    // '?' of a conditional) marks the operand that follows it; a comment at the end of a line marks the statement on it.
    private static SyntaxNode MarkedBy(SyntaxTrivia comment)
    {
        var token = comment.Token;
        if (token.TrailingTrivia.Contains(comment))
        {
            return token.Parent!.AncestorsAndSelf().OfType<StatementSyntax>().First();
        }

        if (token.Parent!.GetFirstToken() != token)
        {
            token = token.GetNextToken();
        }

        var node = token.Parent!;
        while (node is not StatementSyntax && node.Parent is { } parent && parent.GetFirstToken() == token)
        {
            node = parent;
        }

        return node;
    }

    // The app's own methods (declared in this compilation) that a method's body calls, lambdas included.
    private static IEnumerable<BaseMethodDeclarationSyntax> Callees(Compilation compilation, BaseMethodDeclarationSyntax method)
    {
        var model = compilation.GetSemanticModel(method.SyntaxTree);
        return BodyOf(method).DescendantNodes()
            .OfType<InvocationExpressionSyntax>()
            .Select(call => model.GetSymbolInfo(call).Symbol)
            .OfType<IMethodSymbol>()
            .SelectMany(callee => (callee.PartialImplementationPart ?? callee.OriginalDefinition).DeclaringSyntaxReferences)
            .Select(r => r.GetSyntax())
            .OfType<BaseMethodDeclarationSyntax>()
            .Where(m => m.Body is not null || m.ExpressionBody is not null);
    }
}
