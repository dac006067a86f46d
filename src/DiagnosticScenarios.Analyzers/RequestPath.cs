using System.Collections.Concurrent;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace DiagnosticScenarios.Analyzers;

/// <summary>
/// Where ASP.NET Core requests run: the methods the framework calls per request (controller actions, hub methods, page
/// handlers, middleware, filters, the constructors of those types) and the delegates registered as handlers (minimal API
/// <c>Map*</c>, inline <c>Use</c>/<c>Run</c> middleware, endpoint filters, DI factories). The analyzer follows the calls
/// these make in the same compilation up to <see cref="CallDepth"/> calls away.
/// </summary>
internal sealed class RequestPath(KnownSymbols known)
{
    /// <summary>How many calls away from a handler a method still counts as running where requests run.</summary>
    public const int CallDepth = 3;

    private static readonly HashSet<string> MapMethods =
        ["Map", "MapGet", "MapPost", "MapPut", "MapDelete", "MapPatch", "MapMethods", "MapFallback"];

    private static readonly HashSet<string> HttpVerbs = ["Get", "Post", "Put", "Delete", "Patch", "Head", "Options"];

    private readonly ConcurrentDictionary<INamedTypeSymbol, TypeRole> _roles = new(SymbolEqualityComparer.Default);
    private Func<INamedTypeSymbol, TypeRole>? _computeRole;

    [Flags]
    private enum TypeRole
    {
        None = 0,
        Controller = 1,
        Hub = 2,
        PageModel = 4,
        Middleware = 8,
        Filter = 16,
    }

    /// <summary>Whether the framework calls <paramref name="method"/> itself for a request.</summary>
    public bool IsHandler(IMethodSymbol method)
    {
        if (method.IsStatic || method.ContainingType is not { } type)
        {
            return false;
        }

        var role = RoleOf(type);
        if (role == TypeRole.None)
        {
            return false;
        }

        if (method.MethodKind == MethodKind.Constructor)
        {
            return true;
        }

        if (method.MethodKind != MethodKind.Ordinary || method.DeclaredAccessibility != Accessibility.Public || method.Name == "Dispose")
        {
            return (role & TypeRole.Filter) != 0 && IsFilterMethod(method);
        }

        return ((role & TypeRole.Controller) != 0 && !HasAttribute(method, known.NonActionAttribute))
            || (role & TypeRole.Hub) != 0
            || ((role & TypeRole.PageModel) != 0 && IsPageHandler(method.Name))
            || ((role & TypeRole.Middleware) != 0 && method.Name is "Invoke" or "InvokeAsync"
                && method.Parameters.Length > 0 && KnownSymbols.Is(method.Parameters[0].Type, known.HttpContext))
            || ((role & TypeRole.Filter) != 0 && IsFilterMethod(method));
    }

    /// <summary>What the code a delegate argument or event handler points at is to the request path and the shape rules.</summary>
    public DelegateRole RoleOfDelegate(IOperation delegateOperation, out IInvocationOperation? receiver, out IParameterSymbol? parameter)
    {
        receiver = null;
        parameter = null;
        var current = delegateOperation.Parent;
        while (current is IDelegateCreationOperation or IConversionOperation or IParenthesizedOperation)
        {
            current = current.Parent;
        }

        if (current is IEventAssignmentOperation { EventReference: IEventReferenceOperation { Event: { } handled } } && KnownSymbols.Is(handled.ContainingType, known.TimersTimer))
        {
            return DelegateRole.TimerCallback;
        }

        if (current is not IArgumentOperation { Parameter: { } target } argument)
        {
            return DelegateRole.Deferred;
        }

        parameter = target;
        if (argument.Parent is IObjectCreationOperation { Constructor: { } constructor })
        {
            var created = constructor.ContainingType;
            return KnownSymbols.Is(created, known.ThreadingTimer) ? DelegateRole.TimerCallback
                : KnownSymbols.Is(created, known.Thread) || KnownSymbols.DerivesFrom(created, known.Task) || created.Name == "Lazy" ? DelegateRole.Deferred
                : IsInSource(constructor) ? DelegateRole.SourceMethodArgument
                : DelegateRole.Inline;
        }

        if (argument.Parent is not IInvocationOperation invocation)
        {
            return DelegateRole.Deferred;
        }

        receiver = invocation;
        var method = invocation.TargetMethod;
        var type = method.ContainingType;
        if (KnownSymbols.Is(type, known.Task) && method.Name == "Run"
            || (KnownSymbols.Is(type, known.TaskFactory) || KnownSymbols.Is(type, known.TaskFactoryOfT)) && method.Name == "StartNew")
        {
            return DelegateRole.TaskRun;
        }

        if (KnownSymbols.DerivesFrom(type, known.Task) || KnownSymbols.Is(type, known.ThreadPool) || KnownSymbols.Is(type, known.CancellationToken)
            || KnownSymbols.Is(type, known.TaskFactory) || KnownSymbols.Is(type, known.TaskFactoryOfT)
            || (KnownSymbols.DerivesFrom(type, known.HttpResponse) && method.Name is "OnStarting" or "OnCompleted"))
        {
            return DelegateRole.Deferred;
        }

        if (KnownSymbols.Is(type, known.ConcurrentDictionary) && method.Name is "GetOrAdd" or "AddOrUpdate")
        {
            return DelegateRole.DictionaryFactory;
        }

        if (known.HasAspNetCore && IsRegistration(method, target))
        {
            return DelegateRole.Handler;
        }

        return IsInSource(method) ? DelegateRole.SourceMethodArgument : DelegateRole.Inline;
    }

    /// <summary>
    /// The implementation type a DI registration without a factory constructs (<c>AddScoped&lt;TService, TImpl&gt;()</c>,
    /// <c>AddSingleton(typeof(T))</c>, a typed <c>AddHttpClient&lt;T&gt;()</c>), or null.
    /// </summary>
    public INamedTypeSymbol? RegisteredImplementation(IInvocationOperation invocation)
    {
        var method = invocation.TargetMethod;
        if (!known.HasAspNetCore || !IsLifetimeRegistration(method.Name) && method.Name != "AddHttpClient" || !IsDependencyInjection(method))
        {
            return null;
        }

        if (invocation.Arguments.Any(a => a.Value is IDelegateCreationOperation || a.Parameter?.Name is "implementationInstance" or "instance"))
        {
            return null;
        }

        if (method.TypeArguments.Length > 0)
        {
            return method.TypeArguments[method.TypeArguments.Length - 1] as INamedTypeSymbol;
        }

        var typeOfs = invocation.Arguments.Select(a => a.Value).OfType<ITypeOfOperation>().ToList();
        return typeOfs.Count > 0 ? typeOfs[typeOfs.Count - 1].TypeOperand as INamedTypeSymbol : null;
    }

    public static bool IsInSource(IMethodSymbol method) =>
        !method.IsExtern && (method.PartialImplementationPart ?? method).DeclaringSyntaxReferences.Length > 0;

    private bool IsRegistration(IMethodSymbol method, IParameterSymbol parameter)
    {
        var name = method.Name;
        var ns = method.ContainingNamespace?.ToDisplayString() ?? string.Empty;
        if (MapMethods.Contains(name) && ns == "Microsoft.AspNetCore.Builder")
        {
            var builder = method.IsExtensionMethod ? method.Parameters[0].Type : method.ContainingType;
            return KnownSymbols.Implements(builder, known.EndpointRouteBuilder)
                && (KnownSymbols.Is(parameter.Type, known.Delegate) || KnownSymbols.Is(parameter.Type, known.RequestDelegate));
        }

        if (name is "Use" or "Run" && ns == "Microsoft.AspNetCore.Builder")
        {
            return FirstParameterType(parameter.Type) is { } first && KnownSymbols.Is(first, known.HttpContext)
                || KnownSymbols.Is(parameter.Type, known.RequestDelegate);
        }

        if (name == "AddEndpointFilter")
        {
            return parameter.Type.TypeKind == TypeKind.Delegate;
        }

        return IsDependencyInjection(method) && IsLifetimeRegistration(name)
            && FirstParameterType(parameter.Type) is { } provider && KnownSymbols.Is(provider, known.ServiceProvider);
    }

    private static bool IsDependencyInjection(IMethodSymbol method) =>
        method.ContainingNamespace?.ToDisplayString() is "Microsoft.Extensions.DependencyInjection" or "Microsoft.Extensions.DependencyInjection.Extensions";

    private static bool IsLifetimeRegistration(string name) =>
        (name.StartsWith("Add", StringComparison.Ordinal) || name.StartsWith("TryAdd", StringComparison.Ordinal))
        && (name.EndsWith("Scoped", StringComparison.Ordinal) || name.EndsWith("Transient", StringComparison.Ordinal) || name.EndsWith("Singleton", StringComparison.Ordinal));

    private static ITypeSymbol? FirstParameterType(ITypeSymbol delegateType) =>
        delegateType is INamedTypeSymbol { DelegateInvokeMethod: { Parameters.Length: > 0 } invoke } ? invoke.Parameters[0].Type : null;

    private static bool IsPageHandler(string name)
    {
        if (!name.StartsWith("On", StringComparison.Ordinal))
        {
            return false;
        }

        foreach (var verb in HttpVerbs)
        {
            if (string.CompareOrdinal(name, 2, verb, 0, verb.Length) == 0)
            {
                return true;
            }
        }

        return false;
    }

    // The delegate made once: a method group would allocate one per call.
    private TypeRole RoleOf(INamedTypeSymbol type) => _roles.GetOrAdd(type, _computeRole ??= ComputeRole);

    private TypeRole ComputeRole(INamedTypeSymbol type)
    {
        var role = TypeRole.None;
        if (IsController(type))
        {
            role |= TypeRole.Controller;
        }

        if (KnownSymbols.DerivesFrom(type, known.Hub))
        {
            role |= TypeRole.Hub;
        }

        if (KnownSymbols.DerivesFrom(type, known.PageModel))
        {
            role |= TypeRole.PageModel;
        }

        if (KnownSymbols.Implements(type, known.Middleware)
            || type.InstanceConstructors.Any(c => c.DeclaredAccessibility == Accessibility.Public && c.Parameters.Any(p => KnownSymbols.Is(p.Type, known.RequestDelegate))))
        {
            role |= TypeRole.Middleware;
        }

        if (type.AllInterfaces.Any(i => known.FilterInterfaces.Contains(i.OriginalDefinition, SymbolEqualityComparer.Default)))
        {
            role |= TypeRole.Filter;
        }

        return role;
    }

    private bool IsController(INamedTypeSymbol type)
    {
        if (known.ControllerBase is null && known.ControllerAttribute is null)
        {
            return false;
        }

        for (var current = type; current is not null; current = current.BaseType)
        {
            if (HasAttribute(current, known.NonControllerAttribute))
            {
                return false;
            }

            if (KnownSymbols.Is(current, known.ControllerBase) || HasAttribute(current, known.ControllerAttribute) || HasAttribute(current, known.ApiControllerAttribute))
            {
                return true;
            }
        }

        return false;
    }

    private bool IsFilterMethod(IMethodSymbol method)
    {
        var type = method.ContainingType;
        foreach (var filter in type.AllInterfaces)
        {
            if (!known.FilterInterfaces.Contains(filter.OriginalDefinition, SymbolEqualityComparer.Default))
            {
                continue;
            }

            foreach (var member in filter.GetMembers(method.Name))
            {
                var implementation = type.FindImplementationForInterfaceMember(member);
                for (var candidate = method; candidate is not null; candidate = candidate.OverriddenMethod)
                {
                    if (SymbolEqualityComparer.Default.Equals(candidate, implementation))
                    {
                        return true;
                    }
                }
            }
        }

        return false;
    }

    private static bool HasAttribute(ISymbol symbol, INamedTypeSymbol? attribute) =>
        attribute is not null && symbol.GetAttributes().Any(a => SymbolEqualityComparer.Default.Equals(a.AttributeClass, attribute));
}

/// <summary>What a delegate is to the rules, from where it is passed.</summary>
internal enum DelegateRole
{
    /// <summary>Passed to a library method that calls it before returning (LINQ, a cache's factory): part of its caller.</summary>
    Inline,

    /// <summary>Stored, returned, or handed to something that runs it later or elsewhere: not its caller's.</summary>
    Deferred,

    /// <summary>Passed to a method of this compilation: its caller's when that method invokes it directly.</summary>
    SourceMethodArgument,

    /// <summary>Registered as a request handler (<c>Map*</c>, <c>Use</c>, <c>Run</c>, an endpoint filter, a DI factory).</summary>
    Handler,

    /// <summary>The work of <c>Task.Run</c> or <c>TaskFactory.StartNew</c>.</summary>
    TaskRun,

    /// <summary>A <c>ConcurrentDictionary</c> value factory: run inline by the caller.</summary>
    DictionaryFactory,

    /// <summary>A <c>System.Threading.Timer</c> callback or a <c>System.Timers.Timer.Elapsed</c> handler.</summary>
    TimerCallback,
}
