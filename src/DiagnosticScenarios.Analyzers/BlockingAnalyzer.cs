using System.Collections.Concurrent;
using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace DiagnosticScenarios.Analyzers;

/// <summary>
/// Reports the calls that block a pool thread: where requests run (DSB001–DSB006) and in the shapes that block wherever
/// they are (DSB007–DSB009).
/// </summary>
/// <remarks>
/// One walk of each method's operations records its blocking calls and the calls it makes into the compilation. A method
/// the framework calls for a request (a handler) is reported when its body has been walked, so the IDE shows it as you
/// type; what handlers reach through calls, and handlers named by a method group, are known only once every method has
/// been walked, so those are reported at the end of the compilation (a build, or the IDE's full-solution analysis).
/// </remarks>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class BlockingAnalyzer : DiagnosticAnalyzer
{
    /// <summary>Diagnostic property: the awaitable twin the fix calls.</summary>
    public const string TwinProperty = "Twin";

    /// <summary>Diagnostic property: the name of the enclosing handler's <c>CancellationToken</c> the fix passes on.</summary>
    public const string TokenProperty = "Token";

    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } = ImmutableArray.Create(
        Rules.BlockingCall, Rules.SyncOverAsync, Rules.Sleep, Rules.BlockingTake, Rules.LockAcrossBlockingCall, Rules.FakeAsync,
        Rules.WaitOnTaskRun, Rules.WaitInDictionaryFactory, Rules.BlockingTimerCallback);

    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(start =>
        {
            var known = KnownSymbols.Create(start.Compilation);
            if (known.Task is null)
            {
                return;
            }

            var compilation = new CompilationState(known);
            start.RegisterOperationBlockStartAction(compilation.OnBlockStart);
            start.RegisterSymbolAction(compilation.OnNamedType, SymbolKind.NamedType);
            start.RegisterCompilationEndAction(compilation.OnEnd);
        });
    }

    private static DiagnosticDescriptor RequestPathRule(BlockKind kind) => kind switch
    {
        BlockKind.TaskWait => Rules.SyncOverAsync,
        BlockKind.Sleep => Rules.Sleep,
        BlockKind.CollectionTake => Rules.BlockingTake,
        _ => Rules.BlockingCall,
    };

    private static string FakeAsyncAdvice(BlockingCall call) => call.Kind switch
    {
        BlockKind.SyncWithTwin => $"await '{call.Twin}' directly instead",
        BlockKind.TaskWait => "await the task directly instead",
        BlockKind.Sleep => "await 'Task.Delay' directly instead",
        _ => "make the work asynchronous and await it directly instead",
    };

    /// <summary>A finding in a unit of code, reported once the unit is known to run where requests run.</summary>
    private sealed record Site(DiagnosticDescriptor Rule, Location Location, ImmutableDictionary<string, string?> Properties, params string[] Arguments)
    {
        public Diagnostic ToDiagnostic() => Diagnostic.Create(Rule, Location, Properties, Arguments);
    }

    /// <summary>A method, local function or lambda: what it blocks on, what it calls, and whether it is a handler.</summary>
    private sealed class Unit(bool isHandler)
    {
        public bool IsHandler { get; } = isHandler;

        /// <summary>Its own blocking calls, as the request-path rules would report them.</summary>
        public List<Site> Sites { get; } = [];

        /// <summary>The blocking calls themselves, for the rules that look into a unit from outside (Task.Run, timers).</summary>
        public List<(BlockingCall Call, Location Location)> Blocks { get; } = [];

        public List<IMethodSymbol> Callees { get; } = [];

        /// <summary>The ordinals of its own delegate parameters it invokes directly.</summary>
        public HashSet<int> InvokedParameters { get; } = [];
    }

    private sealed class CompilationState(KnownSymbols known)
    {
        private readonly KnownSymbols _known = known;
        private readonly RequestPath _requestPath = new(known);
        private readonly BlockingCalls _blockingCalls = new(known);
        private readonly ConcurrentDictionary<IMethodSymbol, Unit> _units = new(SymbolEqualityComparer.Default);
        private readonly ConcurrentDictionary<IMethodSymbol, ConcurrentBag<IMethodSymbol>> _implementations = new(SymbolEqualityComparer.Default);
        private readonly ConcurrentBag<IMethodSymbol> _namedHandlers = [];
        private readonly ConcurrentBag<IMethodSymbol> _namedTimerCallbacks = [];
        private readonly ConcurrentBag<(IMethodSymbol Caller, Location Location, IMethodSymbol Work)> _namedTaskRuns = [];
        private readonly ConcurrentBag<(IMethodSymbol Caller, IMethodSymbol Callee, int Ordinal, IMethodSymbol Target)> _delegateArguments = [];

        public void OnBlockStart(OperationBlockStartAnalysisContext context)
        {
            var block = new BlockState(this, context.OwningSymbol as IMethodSymbol);
            context.RegisterOperationAction(block.OnInvocation, OperationKind.Invocation);
            context.RegisterOperationAction(block.OnPropertyReference, OperationKind.PropertyReference);
            context.RegisterOperationAction(block.OnObjectCreation, OperationKind.ObjectCreation);
            context.RegisterOperationAction(block.OnMethodReference, OperationKind.MethodReference);
            context.RegisterOperationAction(block.OnAnonymousFunction, OperationKind.AnonymousFunction);
            context.RegisterOperationBlockEndAction(block.OnBlockEnd);
        }

        // Which source methods implement or override which, so a call through an interface or a virtual method reaches them.
        public void OnNamedType(SymbolAnalysisContext context)
        {
            var type = (INamedTypeSymbol)context.Symbol;
            foreach (var member in type.GetMembers())
            {
                if (member is IMethodSymbol { OverriddenMethod: { } overridden } method)
                {
                    AddImplementation(overridden, method);
                }
            }

            foreach (var contract in type.AllInterfaces)
            {
                if (contract.DeclaringSyntaxReferences.Length == 0)
                {
                    continue;
                }

                foreach (var member in contract.GetMembers())
                {
                    if (member is IMethodSymbol contractMethod && type.FindImplementationForInterfaceMember(member) is IMethodSymbol implementation)
                    {
                        AddImplementation(contractMethod, implementation);
                    }
                }
            }
        }

        public void OnEnd(CompilationAnalysisContext context)
        {
            foreach (var (caller, callee, ordinal, target) in _delegateArguments)
            {
                if (_units.TryGetValue(callee, out var invoked) && invoked.InvokedParameters.Contains(ordinal) && _units.TryGetValue(caller, out var unit))
                {
                    unit.Callees.Add(target);
                }
            }

            foreach (var (caller, location, work) in _namedTaskRuns)
            {
                if (_units.TryGetValue(work, out var workUnit) && workUnit.Blocks.Count > 0 && _units.TryGetValue(caller, out var unit))
                {
                    var site = FakeAsyncSite(location, workUnit.Blocks[0].Call);
                    if (unit.IsHandler)
                    {
                        context.ReportDiagnostic(site.ToDiagnostic());
                    }
                    else
                    {
                        unit.Sites.Add(site);
                    }
                }
            }

            foreach (var callback in _namedTimerCallbacks)
            {
                if (_units.TryGetValue(callback, out var unit))
                {
                    foreach (var (call, location) in unit.Blocks)
                    {
                        context.ReportDiagnostic(Diagnostic.Create(Rules.BlockingTimerCallback, location, call.Call));
                    }
                }
            }

            foreach (var unit in ReachedFromHandlers())
            {
                foreach (var site in unit.Sites)
                {
                    context.ReportDiagnostic(site.ToDiagnostic());
                }
            }
        }

        // The units that handlers reach within RequestPath.CallDepth calls, handlers named by a method group included;
        // not the handlers found while walking, whose findings are already reported.
        private IEnumerable<Unit> ReachedFromHandlers()
        {
            var depths = new Dictionary<IMethodSymbol, int>(SymbolEqualityComparer.Default);
            var queue = new Queue<IMethodSymbol>();
            foreach (var entry in _units.Where(u => u.Value.IsHandler).Select(u => u.Key).Concat(_namedHandlers))
            {
                if (!depths.ContainsKey(entry))
                {
                    depths[entry] = 0;
                    queue.Enqueue(entry);
                }
            }

            while (queue.Count > 0)
            {
                var current = queue.Dequeue();
                var depth = depths[current];
                if (!_units.TryGetValue(current, out var unit))
                {
                    continue;
                }

                if (!unit.IsHandler)
                {
                    yield return unit;
                }

                if (depth == RequestPath.CallDepth)
                {
                    continue;
                }

                foreach (var callee in unit.Callees)
                {
                    foreach (var target in Targets(callee))
                    {
                        if (!depths.ContainsKey(target))
                        {
                            depths[target] = depth + 1;
                            queue.Enqueue(target);
                        }
                    }
                }
            }
        }

        private IEnumerable<IMethodSymbol> Targets(IMethodSymbol callee)
        {
            yield return callee;
            if ((callee.IsAbstract || callee.IsVirtual || callee.IsOverride || callee.ContainingType?.TypeKind == TypeKind.Interface)
                && _implementations.TryGetValue(callee, out var implementations))
            {
                foreach (var implementation in implementations)
                {
                    yield return implementation;
                }
            }
        }

        private void AddImplementation(IMethodSymbol contract, IMethodSymbol implementation)
        {
            if (RequestPath.IsInSource(implementation))
            {
                _implementations.GetOrAdd(Normalize(contract), _ => []).Add(Normalize(implementation));
            }
        }

        private static Site FakeAsyncSite(Location location, BlockingCall work) =>
            new(Rules.FakeAsync, location, ImmutableDictionary<string, string?>.Empty, work.Call, FakeAsyncAdvice(work));

        private static IMethodSymbol Normalize(IMethodSymbol method)
        {
            method = method.ReducedFrom ?? method;
            method = method.OriginalDefinition;
            return method.PartialImplementationPart ?? method;
        }

        /// <summary>The walk of one method's operations (or a field initializer's): the driver runs it on one thread.</summary>
        private sealed class BlockState(CompilationState compilation, IMethodSymbol? owner)
        {
            private readonly Dictionary<IMethodSymbol, Unit> _units = new(SymbolEqualityComparer.Default);
            private readonly Dictionary<IMethodSymbol, DelegateRole> _lambdaRoles = new(SymbolEqualityComparer.Default);
            private readonly HashSet<IOperation> _reportedLocks = [];
            private readonly List<(IMethodSymbol Caller, Location Location, IMethodSymbol Work)> _taskRuns = [];
            private readonly List<Diagnostic> _shapeFindings = [];

            private KnownSymbols Known => compilation._known;

            public void OnInvocation(OperationAnalysisContext context)
            {
                var invocation = (IInvocationOperation)context.Operation;
                var target = invocation.TargetMethod;
                var place = Locate(invocation);

                if (target.MethodKind == MethodKind.DelegateInvoke && invocation.Instance is IParameterReferenceOperation { Parameter: { } parameter }
                    && place.Symbol is { } invoker && SymbolEqualityComparer.Default.Equals(parameter.ContainingSymbol, invoker))
                {
                    UnitOf(invoker).InvokedParameters.Add(parameter.Ordinal);
                }

                if (RequestPath.IsInSource(target) && place.Symbol is { } caller)
                {
                    UnitOf(caller).Callees.Add(Normalize(target));
                }

                if (compilation._requestPath.RegisteredImplementation(invocation) is { } registered)
                {
                    foreach (var constructor in registered.InstanceConstructors)
                    {
                        if (RequestPath.IsInSource(constructor))
                        {
                            compilation._namedHandlers.Add(Normalize(constructor));
                        }
                    }
                }

                OnPossibleBlock(invocation, place);
            }

            public void OnPropertyReference(OperationAnalysisContext context)
            {
                var reference = (IPropertyReferenceOperation)context.Operation;
                var place = Locate(reference);
                if (reference.Property.GetMethod is { } getter && RequestPath.IsInSource(getter) && place.Symbol is { } caller)
                {
                    UnitOf(caller).Callees.Add(Normalize(getter));
                }

                OnPossibleBlock(reference, place);
            }

            public void OnObjectCreation(OperationAnalysisContext context)
            {
                var creation = (IObjectCreationOperation)context.Operation;
                if (creation.Constructor is { } constructor && RequestPath.IsInSource(constructor) && Locate(creation).Symbol is { } caller)
                {
                    UnitOf(caller).Callees.Add(Normalize(constructor));
                }
            }

            // A method group handed over as a delegate: a handler, a timer callback, Task.Run's work, or a call by another name.
            public void OnMethodReference(OperationAnalysisContext context)
            {
                var reference = (IMethodReferenceOperation)context.Operation;
                var method = Normalize(reference.Method);
                if (!RequestPath.IsInSource(method))
                {
                    return;
                }

                var role = compilation._requestPath.RoleOfDelegate(reference, out var receiver, out var parameter);
                var caller = Locate(reference).Symbol;
                switch (role)
                {
                    case DelegateRole.Handler:
                        compilation._namedHandlers.Add(method);
                        break;
                    case DelegateRole.TimerCallback:
                        compilation._namedTimerCallbacks.Add(method);
                        break;
                    case DelegateRole.TaskRun when caller is not null && !IsLongRunning(receiver):
                        compilation._namedTaskRuns.Add((caller, receiver!.Syntax.GetLocation(), method));
                        break;
                    case DelegateRole.SourceMethodArgument when caller is not null && receiver is not null && parameter is not null:
                        compilation._delegateArguments.Add((caller, Normalize(receiver.TargetMethod), parameter.Ordinal, method));
                        break;
                    case DelegateRole.Inline or DelegateRole.DictionaryFactory when caller is not null:
                        UnitOf(caller).Callees.Add(method);
                        break;
                }
            }

            // A lambda handed to a method of this compilation runs where that method runs it: recorded, resolved at the end.
            public void OnAnonymousFunction(OperationAnalysisContext context)
            {
                var lambda = (IAnonymousFunctionOperation)context.Operation;
                var role = RoleOf(lambda, out var receiver, out var parameter);
                if (role == DelegateRole.SourceMethodArgument && receiver is not null && parameter is not null && Locate(lambda).Symbol is { } caller)
                {
                    compilation._delegateArguments.Add((caller, Normalize(receiver.TargetMethod), parameter.Ordinal, lambda.Symbol));
                    UnitOf(lambda.Symbol);
                }
                else if (role == DelegateRole.TaskRun && !IsLongRunning(receiver) && Locate(lambda).Symbol is { } runner)
                {
                    _taskRuns.Add((runner, receiver!.Syntax.GetLocation(), lambda.Symbol));
                }
            }

            public void OnBlockEnd(OperationBlockAnalysisContext context)
            {
                foreach (var finding in _shapeFindings)
                {
                    context.ReportDiagnostic(finding);
                }

                foreach (var (runner, location, work) in _taskRuns)
                {
                    if (_units.TryGetValue(work, out var workUnit) && workUnit.Blocks.Count > 0)
                    {
                        UnitOf(runner).Sites.Add(FakeAsyncSite(location, workUnit.Blocks[0].Call));
                    }
                }

                foreach (var pair in _units)
                {
                    if (pair.Value.IsHandler)
                    {
                        foreach (var site in pair.Value.Sites)
                        {
                            context.ReportDiagnostic(site.ToDiagnostic());
                        }
                    }

                    compilation._units.TryAdd(pair.Key, pair.Value);
                }
            }

            private void OnPossibleBlock(IOperation operation, Place place)
            {
                var call = compilation._blockingCalls.Classify(operation);
                if (call.Kind == BlockKind.None)
                {
                    return;
                }

                if (call.Kind == BlockKind.TaskWait && IsTaskRun(call.Task))
                {
                    _shapeFindings.Add(Diagnostic.Create(Rules.WaitOnTaskRun, operation.Syntax.GetLocation(), call.Call));
                    return;
                }

                if (call.Kind == BlockKind.TaskWait && IsKnownCompleted(call.Task, operation, place.Boundary))
                {
                    return;
                }

                if (call.Kind == BlockKind.TaskWait && place.InDictionaryFactory)
                {
                    _shapeFindings.Add(Diagnostic.Create(Rules.WaitInDictionaryFactory, operation.Syntax.GetLocation(), call.Call));
                    return;
                }

                if (place.Role == DelegateRole.TimerCallback)
                {
                    _shapeFindings.Add(Diagnostic.Create(Rules.BlockingTimerCallback, operation.Syntax.GetLocation(), call.Call));
                    return;
                }

                if (place.Symbol is not { } symbol)
                {
                    return;
                }

                var unit = UnitOf(symbol);
                var location = operation.Syntax.GetLocation();
                unit.Blocks.Add((call, location));
                unit.Sites.Add(new Site(RequestPathRule(call.Kind), location, FixProperties(call, symbol), call.Call, call.Advice));

                if (LockAround(operation, place.Boundary) is { } held && _reportedLocks.Add(held))
                {
                    unit.Sites.Add(new Site(Rules.LockAcrossBlockingCall, LockLocation(held), ImmutableDictionary<string, string?>.Empty, call.Call));
                }
            }

            private ImmutableDictionary<string, string?> FixProperties(BlockingCall call, IMethodSymbol unit)
            {
                var properties = ImmutableDictionary<string, string?>.Empty;
                if (call.Twin is not null)
                {
                    properties = properties.Add(TwinProperty, call.Twin);
                }

                if ((call.TwinTakesToken || call.Kind == BlockKind.Sleep)
                    && unit.Parameters.FirstOrDefault(p => KnownSymbols.Is(p.Type, Known.CancellationToken)) is { } token)
                {
                    properties = properties.Add(TokenProperty, token.Name);
                }

                return properties;
            }

            private Unit UnitOf(IMethodSymbol symbol)
            {
                if (!_units.TryGetValue(symbol, out var unit))
                {
                    var isHandler = symbol.MethodKind == MethodKind.AnonymousFunction
                        ? _lambdaRoles.TryGetValue(symbol, out var role) && role == DelegateRole.Handler
                        : symbol.MethodKind != MethodKind.LocalFunction && Known.HasAspNetCore && compilation._requestPath.IsHandler(symbol);
                    unit = new Unit(isHandler);
                    _units[symbol] = unit;
                }

                return unit;
            }

            /// <summary>
            /// The unit an operation belongs to: the nearest lambda that does not run inline, local function, or the block's
            /// method; whether it sits in a ConcurrentDictionary factory on the way.
            /// </summary>
            private Place Locate(IOperation operation)
            {
                var inFactory = false;
                for (var current = operation.Parent; current is not null; current = current.Parent)
                {
                    if (current is IAnonymousFunctionOperation lambda)
                    {
                        if (!_lambdaRoles.TryGetValue(lambda.Symbol, out var role))
                        {
                            role = RoleOf(lambda, out _, out _);
                        }

                        if (role == DelegateRole.Inline)
                        {
                            continue;
                        }

                        if (role == DelegateRole.DictionaryFactory)
                        {
                            inFactory = true;
                            continue;
                        }

                        return new Place(lambda.Symbol, role, lambda, inFactory);
                    }

                    if (current is ILocalFunctionOperation local)
                    {
                        return new Place(local.Symbol, DelegateRole.Inline, local, inFactory);
                    }
                }

                return new Place(owner is null ? null : Normalize(owner), DelegateRole.Inline, null, inFactory);
            }

            private DelegateRole RoleOf(IAnonymousFunctionOperation lambda, out IInvocationOperation? receiver, out IParameterSymbol? parameter)
            {
                var role = compilation._requestPath.RoleOfDelegate(lambda, out receiver, out parameter);
                _lambdaRoles[lambda.Symbol] = role;
                return role;
            }

            private bool IsTaskRun(IOperation? task) =>
                Strip(task) is IInvocationOperation { TargetMethod: { } method }
                && (KnownSymbols.Is(method.ContainingType, Known.Task) && method.Name == "Run"
                    || (KnownSymbols.Is(method.ContainingType, Known.TaskFactory) || KnownSymbols.Is(method.ContainingType, Known.TaskFactoryOfT)) && method.Name == "StartNew");

            private bool IsLongRunning(IInvocationOperation? run) =>
                run is not null && run.Arguments.Any(a => KnownSymbols.Is(a.Value.Type, Known.TaskCreationOptions)
                    && a.Value.ConstantValue is { HasValue: true, Value: int options } && (options & 2) != 0);

            // A task the code has already awaited, or checked for completion around the wait, no longer blocks.
            private static bool IsKnownCompleted(IOperation? task, IOperation wait, IOperation? boundary)
            {
                task = Strip(task);
                if (task is IInvocationOperation { TargetMethod.Name: "FromResult" } || task is IPropertyReferenceOperation { Property.Name: "CompletedTask" })
                {
                    return true;
                }

                var symbol = ReferencedSymbol(task);
                if (symbol is null)
                {
                    return false;
                }

                IOperation root = wait;
                for (var current = wait.Parent; current is not null && current != boundary; current = current.Parent)
                {
                    root = current;
                    if (current is IConditionalOperation conditional && conditional.WhenTrue.Syntax.Span.Contains(wait.Syntax.Span) && ChecksCompletion(conditional.Condition, symbol))
                    {
                        return true;
                    }
                }

                var before = wait.Syntax.SpanStart;
                foreach (var candidate in (boundary ?? root).Descendants())
                {
                    if (candidate.Syntax.SpanStart >= before)
                    {
                        continue;
                    }

                    if (candidate is IAwaitOperation awaited && SameSymbol(ReferencedSymbol(Strip(awaited.Operation)), symbol))
                    {
                        return true;
                    }

                    if (candidate is IInvocationOperation { TargetMethod.Name: "WhenAll" or "WhenAny" } whenAll
                        && whenAll.Arguments.Any(a => Mentions(a.Value, symbol)))
                    {
                        return true;
                    }

                    // Waited for already: that earlier wait is the one that blocks, and is reported.
                    if (WaitedTask(candidate) is { } waited && SameSymbol(ReferencedSymbol(Strip(waited)), symbol))
                    {
                        return true;
                    }
                }

                return false;
            }

            // The task a .Wait(), .Result or .GetAwaiter().GetResult() waits for.
            private static IOperation? WaitedTask(IOperation operation) => operation switch
            {
                IInvocationOperation { TargetMethod.Name: "Wait", Arguments.Length: 0 } wait => wait.Instance,
                IPropertyReferenceOperation { Property.Name: "Result" } result => result.Instance,
                IInvocationOperation { TargetMethod.Name: "GetResult", Instance: IInvocationOperation { TargetMethod.Name: "GetAwaiter" } getAwaiter } => getAwaiter.Instance,
                _ => null,
            };

            private static bool ChecksCompletion(IOperation condition, ISymbol task)
            {
                foreach (var operation in condition.DescendantsAndSelf())
                {
                    if (operation is IPropertyReferenceOperation { Property.Name: "IsCompleted" or "IsCompletedSuccessfully" or "Status" } check
                        && SameSymbol(ReferencedSymbol(check.Instance), task))
                    {
                        return true;
                    }
                }

                return false;
            }

            private static bool Mentions(IOperation operation, ISymbol symbol) =>
                operation.DescendantsAndSelf().Any(o => SameSymbol(ReferencedSymbol(o), symbol));

            private static bool SameSymbol(ISymbol? a, ISymbol b) => SymbolEqualityComparer.Default.Equals(a, b);

            private static ISymbol? ReferencedSymbol(IOperation? operation) => operation switch
            {
                ILocalReferenceOperation local => local.Local,
                IParameterReferenceOperation parameter => parameter.Parameter,
                IFieldReferenceOperation field => field.Field,
                _ => null,
            };

            // The task under ConfigureAwait, AsTask and conversions.
            private static IOperation? Strip(IOperation? operation)
            {
                while (true)
                {
                    switch (operation)
                    {
                        case IConversionOperation conversion:
                            operation = conversion.Operand;
                            break;
                        case IInvocationOperation { TargetMethod.Name: "ConfigureAwait" or "AsTask", Instance: { } instance }:
                            operation = instance;
                            break;
                        default:
                            return operation;
                    }
                }
            }

            /// <summary>
            /// The lock held around <paramref name="operation"/> within its unit: a <c>lock</c> statement, a <c>using</c> of
            /// <c>Lock.EnterScope()</c>, or a <c>Monitor.Enter</c>/<c>Lock.Enter</c> earlier in an enclosing block with no exit
            /// between.
            /// </summary>
            private IOperation? LockAround(IOperation operation, IOperation? boundary)
            {
                var child = operation;
                for (var current = operation.Parent; current is not null && current != boundary; child = current, current = current.Parent)
                {
                    switch (current)
                    {
                        case ILockOperation held when held.Body == child || held.Body.Syntax.Span.Contains(child.Syntax.Span):
                            return held;
                        case IUsingOperation { Resources: { } resources } scope when IsEnterScope(resources) && scope.Body.Syntax.Span.Contains(child.Syntax.Span):
                            return scope;
                        case IBlockOperation block:
                            if (EnteredBefore(block, child) is { } entered)
                            {
                                return entered;
                            }

                            break;
                    }
                }

                return null;
            }

            private IOperation? EnteredBefore(IBlockOperation block, IOperation child)
            {
                var index = block.Operations.IndexOf(child);
                for (var i = index - 1; i >= 0; i--)
                {
                    var statement = block.Operations[i];
                    if (statement is IUsingDeclarationOperation declaration && declaration.DeclarationGroup.Descendants().Any(IsEnterScope))
                    {
                        return declaration;
                    }

                    if (statement is IExpressionStatementOperation { Operation: IInvocationOperation { TargetMethod: { } method } } call
                        && (KnownSymbols.Is(method.ContainingType, Known.Monitor) || KnownSymbols.Is(method.ContainingType, Known.Lock)))
                    {
                        if (method.Name is "Exit")
                        {
                            return null;
                        }

                        if (method.Name is "Enter" or "TryEnter")
                        {
                            return call;
                        }
                    }
                }

                return null;
            }

            private bool IsEnterScope(IOperation operation) =>
                operation.DescendantsAndSelf().Any(o => o is IInvocationOperation { TargetMethod.Name: "EnterScope" } enter && KnownSymbols.Is(enter.TargetMethod.ContainingType, Known.Lock));

            // The lock's own words: "lock (gate)", not the whole statement.
            private static Location LockLocation(IOperation held) =>
                held.Syntax is LockStatementSyntax statement
                    ? Location.Create(statement.SyntaxTree, Microsoft.CodeAnalysis.Text.TextSpan.FromBounds(statement.LockKeyword.SpanStart, statement.CloseParenToken.Span.End))
                    : held.Syntax.GetLocation();
        }

        private readonly record struct Place(IMethodSymbol? Symbol, DelegateRole Role, IOperation? Boundary, bool InDictionaryFactory);
    }
}
