using System.Collections.Immutable;
using Microsoft.CodeAnalysis;

namespace DiagnosticScenarios.Analyzers;

/// <summary>
/// The types the rules look for, resolved once per compilation by metadata name. A type the compilation does not
/// reference is null: without ASP.NET Core only the shape rules can fire.
/// </summary>
internal sealed class KnownSymbols
{
    private static readonly string[] InMemoryIoTypes = ["System.IO.MemoryStream", "System.IO.StringReader", "System.IO.StringWriter"];

    private static readonly string[] FilterInterfaceTypes =
    [
        "Microsoft.AspNetCore.Mvc.Filters.IActionFilter", "Microsoft.AspNetCore.Mvc.Filters.IAsyncActionFilter",
        "Microsoft.AspNetCore.Mvc.Filters.IResultFilter", "Microsoft.AspNetCore.Mvc.Filters.IAsyncResultFilter",
        "Microsoft.AspNetCore.Mvc.Filters.IExceptionFilter", "Microsoft.AspNetCore.Mvc.Filters.IAsyncExceptionFilter",
        "Microsoft.AspNetCore.Mvc.Filters.IAuthorizationFilter", "Microsoft.AspNetCore.Mvc.Filters.IAsyncAuthorizationFilter",
        "Microsoft.AspNetCore.Mvc.Filters.IResourceFilter", "Microsoft.AspNetCore.Mvc.Filters.IAsyncResourceFilter",
        "Microsoft.AspNetCore.Mvc.Filters.IPageFilter", "Microsoft.AspNetCore.Mvc.Filters.IAsyncPageFilter",
        "Microsoft.AspNetCore.Http.IEndpointFilter",
    ];

    private KnownSymbols(Compilation compilation)
    {
        INamedTypeSymbol? Type(string name) => compilation.GetTypeByMetadataName(name);

        Task = Type("System.Threading.Tasks.Task");
        TaskOfT = Type("System.Threading.Tasks.Task`1");
        ValueTask = Type("System.Threading.Tasks.ValueTask");
        ValueTaskOfT = Type("System.Threading.Tasks.ValueTask`1");
        TaskFactory = Type("System.Threading.Tasks.TaskFactory");
        TaskFactoryOfT = Type("System.Threading.Tasks.TaskFactory`1");
        TaskCreationOptions = Type("System.Threading.Tasks.TaskCreationOptions");
        CancellationToken = Type("System.Threading.CancellationToken");
        Thread = Type("System.Threading.Thread");
        Monitor = Type("System.Threading.Monitor");
        Lock = Type("System.Threading.Lock");
        WaitHandle = Type("System.Threading.WaitHandle");
        ManualResetEventSlim = Type("System.Threading.ManualResetEventSlim");
        CountdownEvent = Type("System.Threading.CountdownEvent");
        Barrier = Type("System.Threading.Barrier");
        ThreadingTimer = Type("System.Threading.Timer");
        TimersTimer = Type("System.Timers.Timer");
        ThreadPool = Type("System.Threading.ThreadPool");
        CancellationTokenSource = Type("System.Threading.CancellationTokenSource");
        BlockingCollection = Type("System.Collections.Concurrent.BlockingCollection`1");
        ConcurrentDictionary = Type("System.Collections.Concurrent.ConcurrentDictionary`2");
        IQueryable = Type("System.Linq.IQueryable`1");
        Span = Type("System.Span`1");
        ReadOnlySpan = Type("System.ReadOnlySpan`1");
        Memory = Type("System.Memory`1");
        ReadOnlyMemory = Type("System.ReadOnlyMemory`1");
        Delegate = Type("System.Delegate");
        ObsoleteAttribute = Type("System.ObsoleteAttribute");
        InMemoryIo = InMemoryIoTypes.Select(Type).OfType<INamedTypeSymbol>().ToImmutableArray();

        Enumerable = Type("System.Linq.Enumerable");
        Queryable = Type("System.Linq.Queryable");
        EfQueryableExtensions = Type("Microsoft.EntityFrameworkCore.EntityFrameworkQueryableExtensions");

        ControllerBase = Type("Microsoft.AspNetCore.Mvc.ControllerBase");
        ControllerAttribute = Type("Microsoft.AspNetCore.Mvc.ControllerAttribute");
        ApiControllerAttribute = Type("Microsoft.AspNetCore.Mvc.ApiControllerAttribute");
        NonActionAttribute = Type("Microsoft.AspNetCore.Mvc.NonActionAttribute");
        NonControllerAttribute = Type("Microsoft.AspNetCore.Mvc.NonControllerAttribute");
        Hub = Type("Microsoft.AspNetCore.SignalR.Hub");
        HubOfT = Type("Microsoft.AspNetCore.SignalR.Hub`1");
        PageModel = Type("Microsoft.AspNetCore.Mvc.RazorPages.PageModel");
        HttpContext = Type("Microsoft.AspNetCore.Http.HttpContext");
        RequestDelegate = Type("Microsoft.AspNetCore.Http.RequestDelegate");
        Middleware = Type("Microsoft.AspNetCore.Http.IMiddleware");
        EndpointRouteBuilder = Type("Microsoft.AspNetCore.Routing.IEndpointRouteBuilder");
        ApplicationBuilder = Type("Microsoft.AspNetCore.Builder.IApplicationBuilder");
        EndpointConventionBuilder = Type("Microsoft.AspNetCore.Builder.IEndpointConventionBuilder");
        ServiceCollection = Type("Microsoft.Extensions.DependencyInjection.IServiceCollection");
        ServiceProvider = Type("System.IServiceProvider");
        HttpClientBuilder = Type("Microsoft.Extensions.DependencyInjection.IHttpClientBuilder");
        HttpResponse = Type("Microsoft.AspNetCore.Http.HttpResponse");
        FilterInterfaces = FilterInterfaceTypes.Select(Type).OfType<INamedTypeSymbol>().ToImmutableArray();
    }

    public INamedTypeSymbol? Task { get; }
    public INamedTypeSymbol? TaskOfT { get; }
    public INamedTypeSymbol? ValueTask { get; }
    public INamedTypeSymbol? ValueTaskOfT { get; }
    public INamedTypeSymbol? TaskFactory { get; }
    public INamedTypeSymbol? TaskFactoryOfT { get; }
    public INamedTypeSymbol? TaskCreationOptions { get; }
    public INamedTypeSymbol? CancellationToken { get; }
    public INamedTypeSymbol? Thread { get; }
    public INamedTypeSymbol? Monitor { get; }
    public INamedTypeSymbol? Lock { get; }
    public INamedTypeSymbol? WaitHandle { get; }
    public INamedTypeSymbol? ManualResetEventSlim { get; }
    public INamedTypeSymbol? CountdownEvent { get; }
    public INamedTypeSymbol? Barrier { get; }
    public INamedTypeSymbol? ThreadingTimer { get; }
    public INamedTypeSymbol? TimersTimer { get; }
    public INamedTypeSymbol? ThreadPool { get; }
    public INamedTypeSymbol? CancellationTokenSource { get; }
    public INamedTypeSymbol? BlockingCollection { get; }
    public INamedTypeSymbol? ConcurrentDictionary { get; }
    public INamedTypeSymbol? IQueryable { get; }
    public INamedTypeSymbol? Span { get; }
    public INamedTypeSymbol? ReadOnlySpan { get; }
    public INamedTypeSymbol? Memory { get; }
    public INamedTypeSymbol? ReadOnlyMemory { get; }
    public INamedTypeSymbol? Delegate { get; }
    public INamedTypeSymbol? ObsoleteAttribute { get; }
    public ImmutableArray<INamedTypeSymbol> InMemoryIo { get; }
    public INamedTypeSymbol? Enumerable { get; }
    public INamedTypeSymbol? Queryable { get; }
    public INamedTypeSymbol? EfQueryableExtensions { get; }

    public INamedTypeSymbol? ControllerBase { get; }
    public INamedTypeSymbol? ControllerAttribute { get; }
    public INamedTypeSymbol? ApiControllerAttribute { get; }
    public INamedTypeSymbol? NonActionAttribute { get; }
    public INamedTypeSymbol? NonControllerAttribute { get; }
    public INamedTypeSymbol? Hub { get; }
    public INamedTypeSymbol? HubOfT { get; }
    public INamedTypeSymbol? PageModel { get; }
    public INamedTypeSymbol? HttpContext { get; }
    public INamedTypeSymbol? RequestDelegate { get; }
    public INamedTypeSymbol? Middleware { get; }
    public INamedTypeSymbol? EndpointRouteBuilder { get; }
    public INamedTypeSymbol? ApplicationBuilder { get; }
    public INamedTypeSymbol? EndpointConventionBuilder { get; }
    public INamedTypeSymbol? ServiceCollection { get; }
    public INamedTypeSymbol? ServiceProvider { get; }
    public INamedTypeSymbol? HttpClientBuilder { get; }
    public INamedTypeSymbol? HttpResponse { get; }
    public ImmutableArray<INamedTypeSymbol> FilterInterfaces { get; }

    /// <summary>Whether the compilation references ASP.NET Core at all: the request-path rules need it.</summary>
    public bool HasAspNetCore => HttpContext is not null;

    public static KnownSymbols Create(Compilation compilation) => new(compilation);

    /// <summary>Task, Task&lt;T&gt;, ValueTask, ValueTask&lt;T&gt;.</summary>
    public bool IsTaskLike(ITypeSymbol? type) =>
        type is INamedTypeSymbol named && (Is(named, Task) || Is(named.OriginalDefinition, TaskOfT) || Is(named, ValueTask) || Is(named.OriginalDefinition, ValueTaskOfT));

    public static bool Is(ITypeSymbol? type, INamedTypeSymbol? known) =>
        known is not null && SymbolEqualityComparer.Default.Equals(type?.OriginalDefinition, known);

    /// <summary>Whether <paramref name="type"/> is <paramref name="known"/> or derives from it.</summary>
    public static bool DerivesFrom(ITypeSymbol? type, INamedTypeSymbol? known)
    {
        if (known is null)
        {
            return false;
        }

        for (var current = type; current is not null; current = current.BaseType)
        {
            if (SymbolEqualityComparer.Default.Equals(current.OriginalDefinition, known))
            {
                return true;
            }
        }

        return false;
    }

    public static bool Implements(ITypeSymbol? type, INamedTypeSymbol? known) =>
        known is not null && type is not null &&
        (SymbolEqualityComparer.Default.Equals(type.OriginalDefinition, known) || type.AllInterfaces.Any(i => SymbolEqualityComparer.Default.Equals(i.OriginalDefinition, known)));
}
