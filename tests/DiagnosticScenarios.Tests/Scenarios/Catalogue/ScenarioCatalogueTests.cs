using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text.Json;
using System.Text.RegularExpressions;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Experiments;
using DiagnosticScenarios.Tests.Scenarios.Blocking;
using DiagnosticScenarios.Tests.Scenarios.Mock;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.Controllers;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Catalogue;

/// <summary>The catalogue and the routes the app maps agree both ways, and the app serves the catalogue as it is.</summary>
public sealed class ScenarioCatalogueTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    /// <remarks>
    /// Where the BAD line sits outside the action, in a DI factory the action's request resolves, the entry names the method
    /// that holds it instead: a method of a type that is not a controller, in the namespace of the controller that serves the route.
    /// </remarks>
    [Fact]
    public void EveryCatalogueEntry_IsAMappedRoute_ServedByTheActionItNames()
    {
        var mapped = ScenarioActions();

        var wrong = ScenarioCatalogue.Scenarios
            .Where(s => !mapped.TryGetValue(s.Route, out var action) || (action.Name != s.Action && !IsFactoryBeside(s.Action, action.Controller)))
            .Select(s => $"{s.Route} ({s.Action}): {(mapped.TryGetValue(s.Route, out var action) ? $"served by {action.Name}" : "not mapped")}")
            .ToList();

        Assert.True(wrong.Count == 0, string.Join("; ", wrong));
    }

    [Fact]
    public void EveryRouteOfTheScenarioControllers_HasACatalogueEntry()
    {
        var catalogued = ScenarioCatalogue.Scenarios.Select(s => s.Route).ToHashSet(StringComparer.Ordinal);

        var missing = ScenarioActions().Keys.Where(route => !catalogued.Contains(route)).ToList();

        Assert.True(missing.Count == 0, $"No catalogue entry for: {string.Join(", ", missing)}");
    }

    [Fact]
    public void Catalogue_NamesEachScenarioOncePerFamily_InAKnownFamily()
    {
        var families = ScenarioCatalogue.Families.Select(f => f.Name).ToHashSet(StringComparer.Ordinal);

        Assert.All(ScenarioCatalogue.Scenarios, s => Assert.Contains(s.Family, families));
        Assert.DoesNotContain(ScenarioCatalogue.Scenarios.GroupBy(s => (s.Family, s.Name)), g => g.Count() > 1);
        Assert.DoesNotContain(ScenarioCatalogue.Scenarios.GroupBy(s => s.Route), g => g.Count() > 1);
    }

    [Fact]
    public async Task ScenariosPage_RuntimeViewTable_IsTheCataloguesMeasuredCells()
    {
        var page = await File.ReadAllLinesAsync(MarkdownTables.ScenariosPagePath).DefaultTimeout();

        var rows = RuntimeViews.Rows(page);

        Assert.True(rows.SequenceEqual(RuntimeViews.Scenarios.Select(RuntimeViews.Row)),
            $"docs/scenarios.md's runtime table differs from the catalogue. It should read:{Environment.NewLine}{RuntimeViews.Render()}");
    }

    /// <summary>
    /// Every BAD scenario that blocks the pool has its runtime view, which the load tests check; no other has one. Those
    /// are the loadable families' and the tutorial family's task burst (TaskBurstLoadTests); the tutorial's other BAD
    /// endpoints block no pool thread (the deadlock's threads are its own; CPU, memory, an exception).
    /// </summary>
    [Fact]
    public void RuntimeView_IsGivenForEveryMeasuredBadScenario_AndNoOther()
    {
        var measured = ScenarioCatalogue.Scenarios
            .Where(s => s.Verdict == ScenarioVerdict.Bad)
            .Where(s => ScenarioCatalogue.Families.Single(f => f.Name == s.Family).Loadable || s.Name == "taskburst")
            .ToHashSet();

        var wrong = ScenarioCatalogue.Scenarios
            .Where(s => (s.Runtime is not null) != measured.Contains(s))
            .Select(s => $"{s.Family}/{s.Name}")
            .ToList();

        Assert.True(wrong.Count == 0, $"runtime view given where it is not measured, or missing where it is: {string.Join(", ", wrong)}");
    }

    // The blocking family's load tests type, beside them, the call each BAD pair blocks in: a pair without a row there would
    // have its runtime view, snapshot and wait trace never measured.
    [Fact]
    public void BlockingLoadTests_NameTheBlockingCallOfEveryBadPairOfTheFamily()
    {
        var pairs = CatalogueData.BlockingPairs().Select(p => p.Bad.Name).Order(StringComparer.Ordinal);
        var named = BlockingLoadTests.BadBlocking.Select(row => (string)row[0]).Order(StringComparer.Ordinal);

        Assert.Equal(pairs, named);
    }

    [Fact]
    public async Task ScenariosPage_HasATableRowForEveryCatalogueScenario()
    {
        var page = await File.ReadAllTextAsync(MarkdownTables.ScenariosPagePath).DefaultTimeout();

        var missing = RoutesWithoutARow(page, ScenarioCatalogue.Scenarios);

        Assert.True(missing.Count == 0, $"docs/scenarios.md has no table row for: {string.Join(", ", missing)}");
    }

    /// <summary>The README shows the families a reader can load (mock, blocking, SQL); the tutorial family is on docs/scenarios.md.</summary>
    [Fact]
    public async Task Readme_HasATableRowForEveryScenarioOfTheLoadableFamilies()
    {
        var readme = await File.ReadAllTextAsync(MarkdownTables.ReadmePath).DefaultTimeout();

        var missing = RoutesWithoutARow(readme, ScenarioCatalogue.Loadable);

        Assert.True(missing.Count == 0, $"README.md has no table row for: {string.Join(", ", missing)}");
    }

    // The whole route, less its family's prefix, in a row's first cell: `lock` is a prefix of `lock-async`, `sync` of `syncio`.
    private static List<string> RoutesWithoutARow(string document, IEnumerable<Scenario> scenarios) =>
        [.. scenarios
            .Select(s => s.Route[ScenarioCatalogue.Families.Single(f => f.Name == s.Family).RoutePrefix.Length..])
            .Where(route => !Regex.IsMatch(document, $@"^\| `{Regex.Escape(route)}(`|\?|/)", RegexOptions.Multiline))];

    [Fact]
    public async Task ScenariosApi_ServesTheCatalogue_WithVerdictsAsTheDocumentsWriteThem()
    {
        using var client = _app.CreateClient();

        using var response = await client.GetAsync(new Uri("/api/scenarios", UriKind.Relative)).DefaultTimeout();
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync().DefaultTimeout());

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var scenarios = json.RootElement.GetProperty("scenarios").EnumerateArray().ToList();
        Assert.Equal(ScenarioCatalogue.Scenarios.Select(s => s.Route), scenarios.Select(s => s.GetProperty("route").GetString()));
        Assert.Equal(["BAD", "GOOD", "baseline"], scenarios.Select(s => s.GetProperty("verdict").GetString()).Distinct());
        Assert.Equal(
            ScenarioCatalogue.Scenarios.Select(s => string.Join(",", s.FlaggedBy)),
            scenarios.Select(s => string.Join(",", s.GetProperty("flaggedBy").EnumerateArray().Select(rule => rule.GetString()))));
        var mock = json.RootElement.GetProperty("families").EnumerateArray().Single(f => f.GetProperty("name").GetString() == "mock");
        Assert.Equal(500, mock.GetProperty("defaultDelayMs").GetInt32());
        Assert.True(mock.GetProperty("loadable").GetBoolean());
    }

    /// <summary>
    /// <c>Scenarios:MockDelayMs</c> set, the catalogue says so, on the app and on the live page's server, for the mock
    /// family and for intermittent, whose query is its twin's: <c>compare</c> sends the family's default delay, and had
    /// measured 500 ms under any setting. 1200 ms, longer than the default, so noise cannot make the default look right.
    /// </summary>
    [Fact]
    public async Task ScenariosApi_ServesTheConfiguredMockDelay_ForTheMockFamilyAndIntermittent_OnTheAppAndTheLivePagesServer()
    {
        const int Configured = 1200;
        await using var configured = _app.With(("Scenarios:MockDelayMs", Configured.ToString(CultureInfo.InvariantCulture)));
        using var app = configured.CreateClient(new WebApplicationFactoryClientOptions { AllowAutoRedirect = false });
        using var root = await app.GetAsync(new Uri("/", UriKind.Relative)).DefaultTimeout();
        using var page = new HttpClient { BaseAddress = root.Headers.Location };

        var served = new List<string>();
        foreach (var (where, client) in new[] { ("app", app), ("live page", page) })
        {
            using var json = JsonDocument.Parse(await client.GetStringAsync(new Uri("/api/scenarios", UriKind.Relative)).DefaultTimeout());
            var mock = json.RootElement.GetProperty("families").EnumerateArray().Single(f => f.GetProperty("name").GetString() == "mock");
            var intermittent = json.RootElement.GetProperty("scenarios").EnumerateArray().Single(s => s.GetProperty("name").GetString() == "intermittent");
            served.Add($"{where}: mock {mock.GetProperty("defaultDelayMs").GetInt32()}, intermittent {intermittent.GetProperty("defaults").GetProperty("delayMs").GetInt32()}");
        }

        var watch = Stopwatch.StartNew();
        using var answer = await app.GetAsync(new Uri("/api/blocking/intermittent?every=1000000", UriKind.Relative)).DefaultTimeout();
        watch.Stop();

        Assert.Equal([$"app: mock {Configured}, intermittent {Configured}", $"live page: mock {Configured}, intermittent {Configured}"], served);
        Assert.Equal(HttpStatusCode.OK, answer.StatusCode);
        Assert.True(watch.Elapsed >= TimeSpan.FromMilliseconds(Configured) - ScenarioEndpointTests.TimerResolution, $"intermittent answered in {watch.Elapsed.TotalMilliseconds:F0} ms, before the configured {Configured} ms");
    }

    [Fact]
    public async Task LoadControl_OffersExactlyTheCataloguesLoadableScenarios()
    {
        using var client = _app.CreateClient();

        using var json = JsonDocument.Parse(await client.GetStringAsync(new Uri("/api/threadpool/load", UriKind.Relative)).DefaultTimeout());

        var offered = json.RootElement.GetProperty("scenarios").EnumerateArray().Select(s => "/api/" + s.GetString()).ToList();
        Assert.Equal(ScenarioCatalogue.Loadable.Select(s => s.Route), offered);
        Assert.Contains("/api/diagscenario/ping", offered);
        Assert.DoesNotContain("/api/diagscenario/deadlock", offered);
    }

    // Route template → "Controller.Action" and the controller, for every action of the app's controllers (the scenario controllers).
    private Dictionary<string, (string Name, Type Controller)> ScenarioActions() =>
        _app.Services.GetRequiredService<EndpointDataSource>().Endpoints
            .OfType<RouteEndpoint>()
            .Select(e => (Endpoint: e, Action: e.Metadata.GetMetadata<ControllerActionDescriptor>()))
            .Where(e => e.Action is not null)
            .ToDictionary(
                e => "/" + e.Endpoint.RoutePattern.RawText!.TrimStart('/'),
                e => ($"{e.Action!.ControllerTypeInfo.Name}.{e.Action.MethodInfo.Name}", e.Action.ControllerTypeInfo.AsType()),
                StringComparer.Ordinal);

    private static bool IsFactoryBeside(string typeAndMethod, Type controller)
    {
        var dot = typeAndMethod.LastIndexOf('.');
        var type = controller.Assembly.GetType($"{controller.Namespace}.{typeAndMethod[..dot]}");
        return type is not null && !typeof(ControllerBase).IsAssignableFrom(type) && type.GetMethod(typeAndMethod[(dot + 1)..]) is not null;
    }
}
