namespace DiagnosticScenarios.Tests.Analyzers;

/// <summary>
/// The request-path rules (DSB001–DSB006): each fires in every place ASP.NET Core runs requests, and in none of the
/// places it does not. A place is a source with <c>$$</c> where a rule's statement goes; the statement carries its
/// expected diagnostics as markup, which a quiet place strips.
/// </summary>
[StartsEarly("a compilation with the analyzer for every place requests run and every place they do not, on the processor")]
public sealed class RequestPathRuleTests
{
    /// <summary>Statements that block, each marked with the rules that flag it where requests run.</summary>
    private static readonly Dictionary<string, string> Blocks = new()
    {
        ["DSB001"] = "{|DSB001:Store.Query()|};",
        ["DSB002"] = "_ = {|DSB002:Store.QueryAsync().Result|};",
        ["DSB003"] = "{|DSB003:Thread.Sleep(10)|};",
        ["DSB004"] = "_ = {|DSB004:Store.Replies.Take()|};",
        ["DSB005"] = "{|DSB005:lock (Store.Gate)|} { {|DSB001:Store.Query()|}; }",
        ["DSB006"] = "_ = {|DSB006:Task.Run(() => Store.Query())|};",
    };

    /// <summary>Where requests run.</summary>
    private static readonly Dictionary<string, string> RequestPlaces = new()
    {
        ["ControllerBaseAction"] = """
            public sealed class OrdersController : ControllerBase
            {
                [HttpGet("orders")]
                public string Get() { $$ return "ok"; }
            }
            """,
        ["ControllerAction"] = """
            public sealed class HomeController : Controller
            {
                public IActionResult Index() { $$ return View(); }
            }
            """,
        ["ControllerConstructor"] = """
            [ApiController]
            public sealed class OrdersController : ControllerBase
            {
                public OrdersController() { $$ }
            }
            """,
        ["MinimalApiLambda"] = """
            public static class Endpoints
            {
                public static void Map(IEndpointRouteBuilder app) => app.MapGet("/orders", () => { $$ return "ok"; });
            }
            """,
        ["MinimalApiMethodGroup"] = """
            public static class Endpoints
            {
                public static void Map(IEndpointRouteBuilder app) => app.MapPost("/orders", Create);

                private static string Create() { $$ return "ok"; }
            }
            """,
        ["RouteGroupLambda"] = """
            public static class Endpoints
            {
                public static void Map(IEndpointRouteBuilder app) => app.MapGroup("/api").MapDelete("/orders/{id}", (int id) => { $$ return Results.NoContent(); });
            }
            """,
        ["ConventionalMiddleware"] = """
            public sealed class TimingMiddleware(RequestDelegate next)
            {
                public Task InvokeAsync(HttpContext context) { $$ return next(context); }
            }
            """,
        ["FactoryMiddleware"] = """
            public sealed class TenantMiddleware : IMiddleware
            {
                public Task InvokeAsync(HttpContext context, RequestDelegate next) { $$ return next(context); }
            }
            """,
        ["InlineUseMiddleware"] = """
            public static class Pipeline
            {
                public static void Configure(IApplicationBuilder app) => app.Use(async (context, next) => { $$ await next(context); });
            }
            """,
        ["InlineRunMiddleware"] = """
            public static class Pipeline
            {
                public static void Configure(IApplicationBuilder app) => app.Run(context => { $$ return Task.CompletedTask; });
            }
            """,
        ["ActionFilter"] = """
            public sealed class AuditFilter : IActionFilter
            {
                public void OnActionExecuting(ActionExecutingContext context) { $$ }

                public void OnActionExecuted(ActionExecutedContext context) { }
            }
            """,
        ["ActionFilterAttributeOverride"] = """
            public sealed class AuditAttribute : ActionFilterAttribute
            {
                public override void OnActionExecuting(ActionExecutingContext context) { $$ }
            }
            """,
        ["EndpointFilterLambda"] = """
            public static class Endpoints
            {
                public static void Map(IEndpointRouteBuilder app) =>
                    app.MapGet("/orders", () => "ok").AddEndpointFilter((context, next) => { $$ return next(context); });
            }
            """,
        ["SignalRHubMethod"] = """
            public sealed class ChatHub : Hub
            {
                public string Send(string message) { $$ return message; }
            }
            """,
        ["RazorPageHandler"] = """
            public sealed class OrdersModel : PageModel
            {
                public void OnGetDetails(int id) { $$ }
            }
            """,
        ["DependencyInjectionFactory"] = """
            public sealed class Settings;

            public static class Registration
            {
                public static void Add(IServiceCollection services) => services.AddScoped(provider => { $$ return new Settings(); });
            }
            """,
        ["KeyedDependencyInjectionFactory"] = """
            public sealed class Settings;

            public static class Registration
            {
                public static void Add(IServiceCollection services) => services.AddKeyedSingleton("tenant", (provider, key) => { $$ return new Settings(); });
            }
            """,
        ["RegisteredServiceConstructor"] = """
            public sealed class Settings
            {
                public Settings() { $$ }
            }

            public static class Registration
            {
                public static void Add(IServiceCollection services) => services.AddScoped<Settings>();
            }
            """,
        ["MethodTheActionCalls"] = """
            public sealed class OrdersController : ControllerBase
            {
                [HttpGet("orders")]
                public string Get() => Load();

                private static string Load() { $$ return "ok"; }
            }
            """,
        ["ImplementationThreeCallsAway"] = """
            public interface IOrders { string Load(); }

            public sealed class SqlOrders : IOrders
            {
                public string Load() { $$ return "ok"; }
            }

            public sealed class OrderService(IOrders orders)
            {
                public string Find() => Cached();

                private string Cached() => orders.Load();
            }

            public sealed class OrdersController(OrderService service) : ControllerBase
            {
                [HttpGet("orders")]
                public string Get() => service.Find();
            }
            """,
    };

    /// <summary>Where requests do not run: the request-path rules stay quiet.</summary>
    private static readonly Dictionary<string, string> QuietPlaces = new()
    {
        ["ConsoleMain"] = """
            public static class Program
            {
                public static void Main() { $$ }
            }
            """,
        ["XunitTestMethod"] = """
            public sealed class OrderTests
            {
                [Fact]
                public void Load_ReturnsTheRow() { $$ Assert.True(true); }
            }
            """,
        ["BackgroundServiceLoop"] = """
            public sealed class Poller : BackgroundService
            {
                protected override async Task ExecuteAsync(CancellationToken stoppingToken)
                {
                    while (!stoppingToken.IsCancellationRequested)
                    {
                        $$
                        await Task.Yield();
                    }
                }
            }
            """,
        ["MethodFourCallsAway"] = """
            public sealed class OrdersController : ControllerBase
            {
                [HttpGet("orders")]
                public string Get() => One();

                private static string One() => Two();

                private static string Two() => Three();

                private static string Three() => Four();

                private static string Four() { $$ return "ok"; }
            }
            """,
        ["DedicatedThreadStartedByAnAction"] = """
            public sealed class OrdersController : ControllerBase
            {
                [HttpGet("orders")]
                public string Get()
                {
                    new Thread(() => { $$ }).Start();
                    return "ok";
                }
            }
            """,
        ["NonActionMethod"] = """
            public sealed class OrdersController : ControllerBase
            {
                [NonAction]
                public string Load() { $$ return "ok"; }
            }
            """,
        ["ResponseOnCompletedCallback"] = """
            public static class Endpoints
            {
                public static void Map(IEndpointRouteBuilder app) => app.MapGet("/orders", (HttpContext context) =>
                {
                    context.Response.OnCompleted(() => { $$ return Task.CompletedTask; });
                    return "ok";
                });
            }
            """,
    };

    public static TheoryData<string, string> RequestCases => Cases(RequestPlaces.Keys);

    public static TheoryData<string, string> QuietCases => Cases(QuietPlaces.Keys);

    [Theory]
    [MemberData(nameof(RequestCases))]
    public Task Rule_Fires_WhereRequestsRun(string rule, string place) =>
        PackageVerifier.AnalyzeAsync(Source(RequestPlaces[place], Blocks[rule]));

    [Theory]
    [MemberData(nameof(QuietCases))]
    public Task Rule_StaysQuiet_WhereRequestsDoNotRun(string rule, string place) =>
        PackageVerifier.AnalyzeAsync(Source(QuietPlaces[place], Unmarked(Blocks[rule])));

    /// <summary>Without ASP.NET Core referenced, nothing is a handler: a controller-shaped class is just a class.</summary>
    [Fact]
    public Task RequestPathRules_StayQuiet_WithoutAspNetCoreReferenced() =>
        PackageVerifier.AnalyzeAsync(
            "using System.Collections.Concurrent;\nusing System.Threading;\nusing System.Threading.Tasks;\n" + Store + """
            public sealed class OrdersController
            {
                public string Get() { Store.Query(); _ = Store.QueryAsync().Result; Thread.Sleep(10); return "ok"; }
            }
            """,
            OfflineReferences.Runtime);

    private static TheoryData<string, string> Cases(IEnumerable<string> places)
    {
        var data = new TheoryData<string, string>();
        foreach (var rule in Blocks.Keys)
        {
            foreach (var place in places)
            {
                data.Add(rule, place);
            }
        }

        return data;
    }

    internal static string Source(string place, string block) => Usings + Store + place.Replace("$$", block, StringComparison.Ordinal);

    private static string Unmarked(string block) =>
        System.Text.RegularExpressions.Regex.Replace(block, @"\{\|DSB\d{3}:(.*?)\|\}", "$1");

    internal const string Usings = """
        using System;
        using System.Collections.Concurrent;
        using System.Threading;
        using System.Threading.Tasks;
        using Microsoft.AspNetCore.Builder;
        using Microsoft.AspNetCore.Http;
        using Microsoft.AspNetCore.Mvc;
        using Microsoft.AspNetCore.Mvc.Filters;
        using Microsoft.AspNetCore.Mvc.RazorPages;
        using Microsoft.AspNetCore.Routing;
        using Microsoft.AspNetCore.SignalR;
        using Microsoft.Extensions.DependencyInjection;
        using Microsoft.Extensions.Hosting;
        using Xunit;

        """;

    /// <summary>A store with a blocking query and its awaitable twin, neither of which blocks in its own body.</summary>
    internal const string Store = """
        public static class Store
        {
            public static readonly object Gate = new();
            public static readonly BlockingCollection<string> Replies = new();

            public static string Query() => "row";

            public static Task<string> QueryAsync(CancellationToken cancellationToken = default) => Task.FromResult("row");
        }

        """;
}
