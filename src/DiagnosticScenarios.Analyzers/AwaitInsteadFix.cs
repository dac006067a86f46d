using System.Collections.Immutable;
using System.Composition;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Editing;
using Microsoft.CodeAnalysis.FindSymbols;
using static Microsoft.CodeAnalysis.CSharp.SyntaxFactory;

namespace DiagnosticScenarios.Analyzers;

/// <summary>
/// Awaits instead of blocking, where the change is mechanical: the <c>…Async</c> twin of a synchronous call (DSB001), the
/// task under <c>.Result</c>, <c>.Wait()</c> or <c>.GetAwaiter().GetResult()</c> (DSB002), <c>Task.Delay</c> for
/// <c>Thread.Sleep</c> (DSB003). The enclosing method or handler lambda becomes <c>async</c>, its return type wrapped in a
/// <c>Task</c>, and its callers in the same document await it when they are handlers themselves.
/// </summary>
/// <remarks>
/// Offered only where the result compiles as the same program: not in a constructor, an accessor, an override or an
/// interface method (their signatures are not the method's to change), not in a method that returns a task without
/// <c>async</c>, not in a lambda that runs inline, and not when the changed method has callers that are not handlers
/// in the same document.
/// </remarks>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(AwaitInsteadFix)), Shared]
public sealed class AwaitInsteadFix : CodeFixProvider
{
    public override ImmutableArray<string> FixableDiagnosticIds { get; } =
        ImmutableArray.Create(Rules.BlockingCall.Id, Rules.SyncOverAsync.Id, Rules.Sleep.Id);

    // Each fix makes its method async; batching them would add the modifier once per diagnostic.
    public override FixAllProvider GetFixAllProvider() =>
        FixAllProvider.Create(async (context, document, diagnostics) => await FixAsync(document, diagnostics, context.CancellationToken).ConfigureAwait(false));

    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        foreach (var diagnostic in context.Diagnostics)
        {
            var single = ImmutableArray.Create(diagnostic);
            if (await PlanAsync(context.Document, single, context.CancellationToken).ConfigureAwait(false) is null)
            {
                continue;
            }

            var title = diagnostic.Id switch
            {
                "DSB001" => $"Await '{diagnostic.Properties[BlockingAnalyzer.TwinProperty]}' instead",
                "DSB003" => "Await 'Task.Delay' instead",
                _ => "Await the task instead",
            };
            context.RegisterCodeFix(
                CodeAction.Create(title, token => FixAsync(context.Document, single, token), equivalenceKey: diagnostic.Id),
                diagnostic);
        }
    }

    private static async Task<Document> FixAsync(Document document, ImmutableArray<Diagnostic> diagnostics, CancellationToken cancellationToken) =>
        await PlanAsync(document, diagnostics, cancellationToken).ConfigureAwait(false) is { } plan
            ? document.WithSyntaxRoot(plan.Apply())
            : document;

    /// <summary>What a fix changes: each blocking expression's replacement, and the functions that become async.</summary>
    private sealed class Plan(SyntaxNode root)
    {
        public List<(SyntaxNode Blocking, ExpressionSyntax Awaiting)> Replacements { get; } = [];

        public Dictionary<SyntaxNode, TypeSyntax?> AsyncFunctions { get; } = [];

        public SyntaxNode Apply()
        {
            var replacements = Replacements.ToDictionary(r => r.Blocking, r => r.Awaiting);
            return root.ReplaceNodes(
                replacements.Keys.Concat(AsyncFunctions.Keys),
                (original, current) => replacements.TryGetValue(original, out var awaiting)
                    ? awaiting.WithTriviaFrom(current)
                    : MakeAsync(current, AsyncFunctions[original]));
        }
    }

    private static async Task<Plan?> PlanAsync(Document document, ImmutableArray<Diagnostic> diagnostics, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        var model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        if (root is null || model is null)
        {
            return null;
        }

        var plan = new Plan(root);
        var known = KnownSymbols.Create(model.Compilation);
        var changed = new List<IMethodSymbol>();
        foreach (var diagnostic in diagnostics)
        {
            var node = root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
            var blocking = node as ExpressionSyntax;
            var awaited = blocking is null ? null : Awaiting(blocking, diagnostic, model, known, cancellationToken);
            if (blocking is null || awaited is null || EnclosingFunction(blocking) is not { } function
                || !TryMakeAsync(function, model, known, plan, changed, cancellationToken))
            {
                continue;
            }

            plan.Replacements.Add((blocking, Parenthesize(blocking, AwaitExpression(awaited.WithoutTrivia()))));
        }

        // A method that became async is awaited by its callers, which must all be handlers in this document.
        var callerChanges = new List<IMethodSymbol>();
        foreach (var method in changed)
        {
            var references = await SymbolFinder.FindReferencesAsync(method, document.Project.Solution, cancellationToken).ConfigureAwait(false);
            foreach (var location in references.SelectMany(r => r.Locations))
            {
                if (location.Document.Id != document.Id
                    || root.FindNode(location.Location.SourceSpan).FirstAncestorOrSelf<InvocationExpressionSyntax>() is not { } call
                    || EnclosingFunction(call) is not { } caller
                    || model.GetDeclaredSymbol(caller, cancellationToken) is not IMethodSymbol callerSymbol
                    || !new RequestPath(known).IsHandler(callerSymbol)
                    || !TryMakeAsync(caller, model, known, plan, callerChanges, cancellationToken))
                {
                    return null;
                }

                plan.Replacements.Add((call, Parenthesize(call, AwaitExpression(call.WithoutTrivia()))));
            }
        }

        return plan.Replacements.Count > 0 ? plan : null;
    }

    // What to await in place of the blocking expression, or null when the change is not mechanical.
    private static ExpressionSyntax? Awaiting(ExpressionSyntax blocking, Diagnostic diagnostic, SemanticModel model, KnownSymbols known, CancellationToken cancellationToken)
    {
        diagnostic.Properties.TryGetValue(BlockingAnalyzer.TokenProperty, out var token);
        switch (diagnostic.Id)
        {
            case "DSB001" when blocking is InvocationExpressionSyntax call && diagnostic.Properties.TryGetValue(BlockingAnalyzer.TwinProperty, out var twin) && twin is not null:
                return TwinCall(call, twin, token, model, cancellationToken);
            case "DSB003" when blocking is InvocationExpressionSyntax { ArgumentList.Arguments.Count: 1 } sleep:
                var delay = sleep.ArgumentList.Arguments[0];
                var arguments = token is null ? ArgumentList(SingletonSeparatedList(delay)) : ArgumentList(SeparatedList([delay, Argument(IdentifierName(token))]));
                return InvocationExpression(MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, TaskType(model, blocking.SpanStart, known), IdentifierName("Delay")), arguments);
            case "DSB002":
                return AwaitedTask(blocking, model, known, cancellationToken);
            default:
                return null;
        }
    }

    // x.Result, x.Wait(), x.Wait(token), x.GetAwaiter().GetResult(), Task.WaitAll(a, b) as a statement.
    private static ExpressionSyntax? AwaitedTask(ExpressionSyntax blocking, SemanticModel model, KnownSymbols known, CancellationToken cancellationToken)
    {
        switch (blocking)
        {
            case MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Result" } result:
                return result.Expression;
            case InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "GetResult", Expression: InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "GetAwaiter" } getAwaiter } } }:
                return getAwaiter.Expression;
            case InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Wait" } wait } call
                when model.GetSymbolInfo(call, cancellationToken).Symbol is IMethodSymbol { IsStatic: false } method:
                return method.Parameters.Length == 0 ? wait.Expression
                    : method.Parameters.Length == 1 && KnownSymbols.Is(method.Parameters[0].Type, known.CancellationToken)
                        ? InvocationExpression(MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, wait.Expression, IdentifierName("WaitAsync")), call.ArgumentList)
                        : null;
            case InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "WaitAll" } waitAll } call
                when call.Parent is ExpressionStatementSyntax:
                return InvocationExpression(waitAll.WithName(IdentifierName("WhenAll")), call.ArgumentList);
            default:
                return null;
        }
    }

    // recv.Query(args) → recv.QueryAsync(args[, token]): the same receiver and arguments, the token where the twin takes one.
    private static InvocationExpressionSyntax? TwinCall(InvocationExpressionSyntax call, string twin, string? token, SemanticModel model, CancellationToken cancellationToken)
    {
        if (model.GetSymbolInfo(call, cancellationToken).Symbol is not IMethodSymbol method)
        {
            return null;
        }

        ExpressionSyntax? renamed = call.Expression switch
        {
            MemberAccessExpressionSyntax access => access.WithName(Rename(access.Name, twin)),
            SimpleNameSyntax name => Rename(name, twin),
            _ => null,
        };
        if (renamed is null)
        {
            return null;
        }

        var arguments = call.ArgumentList;
        var tokenParameter = token is null ? null : method.ContainingType.GetMembers(twin).OfType<IMethodSymbol>()
            .Select(m => m.Parameters.LastOrDefault())
            .FirstOrDefault(p => p is not null && p.Type.Name == "CancellationToken" && p.ContainingSymbol is IMethodSymbol m && m.Parameters.Length == method.Parameters.Length + 1);
        if (tokenParameter is not null)
        {
            var argument = arguments.Arguments.Count == method.Parameters.Length
                ? Argument(IdentifierName(token!))
                : Argument(NameColon(IdentifierName(tokenParameter.Name)), default, IdentifierName(token!));
            arguments = arguments.AddArguments(argument);
        }

        return call.WithExpression(renamed).WithArgumentList(arguments);
    }

    private static SimpleNameSyntax Rename(SimpleNameSyntax name, string twin) =>
        name is GenericNameSyntax generic ? generic.WithIdentifier(Identifier(twin)) : IdentifierName(twin).WithTriviaFrom(name);

    private static ExpressionSyntax Parenthesize(SyntaxNode replaced, AwaitExpressionSyntax awaiting) =>
        replaced.Parent is MemberAccessExpressionSyntax or ElementAccessExpressionSyntax or ConditionalAccessExpressionSyntax
            or InvocationExpressionSyntax or PostfixUnaryExpressionSyntax or CastExpressionSyntax or BinaryExpressionSyntax
            ? ParenthesizedExpression(awaiting)
            : awaiting;

    private static SyntaxNode? EnclosingFunction(SyntaxNode node) =>
        node.Ancestors().FirstOrDefault(a => a is MethodDeclarationSyntax or LocalFunctionStatementSyntax or AnonymousFunctionExpressionSyntax
            or ConstructorDeclarationSyntax or AccessorDeclarationSyntax or OperatorDeclarationSyntax or ConversionOperatorDeclarationSyntax);

    /// <summary>
    /// Records that <paramref name="function"/> becomes async (with the return type it gets), when it can: an ordinary
    /// method or local function whose signature is its own, or a lambda registered as a handler (whose delegate type is
    /// <c>Delegate</c> or already returns a task). The methods whose signature changes are added to <paramref name="changed"/>.
    /// </summary>
    private static bool TryMakeAsync(SyntaxNode function, SemanticModel model, KnownSymbols known, Plan plan, List<IMethodSymbol> changed, CancellationToken cancellationToken)
    {
        if (plan.AsyncFunctions.ContainsKey(function))
        {
            return true;
        }

        switch (function)
        {
            case AnonymousFunctionExpressionSyntax lambda:
                if (lambda.AsyncKeyword.IsKind(SyntaxKind.AsyncKeyword))
                {
                    return true;
                }

                if (model.GetTypeInfo(lambda, cancellationToken).ConvertedType is not { } delegateType || !KnownSymbols.Is(delegateType, known.Delegate))
                {
                    return false;
                }

                plan.AsyncFunctions[function] = null;
                return true;

            case MethodDeclarationSyntax or LocalFunctionStatementSyntax:
                if (model.GetDeclaredSymbol(function, cancellationToken) is not IMethodSymbol method)
                {
                    return false;
                }

                if (method.IsAsync)
                {
                    return true;
                }

                if (method.IsOverride || method.ExplicitInterfaceImplementations.Length > 0 || ImplementsInterface(method) || known.IsTaskLike(method.ReturnType))
                {
                    return false;
                }

                var returnType = function is MethodDeclarationSyntax declaration ? declaration.ReturnType : ((LocalFunctionStatementSyntax)function).ReturnType;
                var task = TaskType(model, function.SpanStart, known);
                plan.AsyncFunctions[function] = method.ReturnsVoid
                    ? task.WithTriviaFrom(returnType)
                    : TaskOf(task, returnType);
                if (method.MethodKind == MethodKind.Ordinary)
                {
                    changed.Add(method);
                }

                return true;

            default:
                return false;
        }
    }

    private static bool ImplementsInterface(IMethodSymbol method) =>
        method.ContainingType.AllInterfaces.SelectMany(i => i.GetMembers(method.Name))
            .Any(member => SymbolEqualityComparer.Default.Equals(method.ContainingType.FindImplementationForInterfaceMember(member), method));

    private static TypeSyntax TaskOf(NameSyntax task, TypeSyntax returnType)
    {
        var wrapped = returnType.WithoutTrivia();
        TypeSyntax generic = task switch
        {
            QualifiedNameSyntax qualified => qualified.WithRight(GenericName(qualified.Right.Identifier, TypeArgumentList(SingletonSeparatedList(wrapped)))),
            _ => GenericName(((SimpleNameSyntax)task).Identifier, TypeArgumentList(SingletonSeparatedList(wrapped))),
        };
        return generic.WithTriviaFrom(returnType);
    }

    // Task by its simple name where the file sees System.Threading.Tasks.Task under it, else by its full name.
    private static NameSyntax TaskType(SemanticModel model, int position, KnownSymbols known) =>
        model.LookupNamespacesAndTypes(position, name: "Task").Any(t => SymbolEqualityComparer.Default.Equals(t, known.Task))
            ? IdentifierName("Task")
            : ParseName("System.Threading.Tasks.Task");

    private static SyntaxNode MakeAsync(SyntaxNode function, TypeSyntax? returnType) => function switch
    {
        MethodDeclarationSyntax method => method.Modifiers.Count == 0
            ? method.WithModifiers(TokenList(AsyncToken(method.ReturnType.GetLeadingTrivia()))).WithReturnType(returnType!.WithoutLeadingTrivia())
            : method.AddModifiers(AsyncToken(default)).WithReturnType(returnType!),
        LocalFunctionStatementSyntax local => local.Modifiers.Count == 0
            ? local.WithModifiers(TokenList(AsyncToken(local.ReturnType.GetLeadingTrivia()))).WithReturnType(returnType!.WithoutLeadingTrivia())
            : local.AddModifiers(AsyncToken(default)).WithReturnType(returnType!),
        AnonymousFunctionExpressionSyntax lambda => lambda.WithoutLeadingTrivia().WithAsyncKeyword(AsyncToken(lambda.GetLeadingTrivia())),
        _ => function,
    };

    private static SyntaxToken AsyncToken(SyntaxTriviaList leading) =>
        Token(leading, SyntaxKind.AsyncKeyword, TriviaList(Space));
}
