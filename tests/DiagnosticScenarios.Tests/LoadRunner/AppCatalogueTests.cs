using System.Net.Http.Json;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.Scenarios.Catalogue;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.LoadRunner;

/// <summary>The runner reads the app's <c>GET /api/scenarios</c> into the lists <c>compare</c> measures.</summary>
public sealed class AppCatalogueTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Theory]
    [InlineData("mock")]
    [InlineData("sql")]
    [InlineData("blocking")]
    public async Task Family_ListsTheCataloguesBadAndGoodShapes_WithTheFamilysDelay(string name)
    {
        var catalogue = await ReadAsync();
        var expected = ScenarioCatalogue.FindFamily(name)!;

        var family = catalogue.Family(name);

        Assert.Equal(CatalogueData.Shapes(expected), family.Scenarios.Select(s => s.Name));
        Assert.Equal(expected.DefaultDelayMs, family.DefaultDelayMs);
        Assert.All(family.Scenarios, s => Assert.NotEqual(ScenarioVerdict.Baseline, s.Verdict));
        Assert.Contains(family.Scenarios, s => s.Verdict == ScenarioVerdict.Good);
    }

    [Fact]
    public async Task Family_RefusesAFamilyThatCannotBeLoaded()
    {
        var catalogue = await ReadAsync();

        var refused = Assert.Throws<UnknownScenarioException>(() => catalogue.Family("tutorial"));

        Assert.Equal("Unknown family 'tutorial'; known: mock, sql, blocking.", refused.Message);
    }

    [Fact]
    public async Task Scenario_CarriesHowToLoadIt_APostWithASlowUploadForBodyRead()
    {
        var catalogue = await ReadAsync();
        var expected = CatalogueData.Find(ScenarioCatalogue.Blocking, "bodyread").Load!;

        var scenarios = catalogue.Family("blocking").Scenarios;
        var bodyRead = scenarios.Single(s => s.Name == "bodyread").LoadOptions(new Uri("http://127.0.0.1:1/api/blocking/bodyread"));
        var channel = scenarios.Single(s => s.Name == "channel").LoadOptions(new Uri("http://127.0.0.1:1/api/blocking/channel"));

        Assert.Equal((HttpMethod.Post, expected.BodyBytes, TimeSpan.FromMilliseconds(expected.UploadMs)), (bodyRead.Method, bodyRead.BodyBytes!.Value, bodyRead.UploadOver!.Value));
        Assert.Equal((HttpMethod.Get, null, null), (channel.Method, channel.BodyBytes, channel.UploadOver));
    }

    [Fact]
    public async Task Chart_DrawsEachBlockingTwinInItsBadScenariosColourDashed_AndTheMockFamilysSharedAsyncShapeGreen()
    {
        var catalogue = await ReadAsync();
        var blocking = catalogue.Family("blocking").Scenarios;
        var mock = catalogue.Family("mock").Scenarios;

        var (colors, dashed) = CompareChart.Colors([.. blocking.Select(s => (s.Name, s.Verdict, catalogue.TwinOf(s)))]);
        var (mockColors, mockDashed) = CompareChart.Colors([.. mock.Select(s => (s.Name, s.Verdict, catalogue.TwinOf(s)))]);

        // The pairs within the family (intermittent is measured against the mock family's async shape, not drawn here).
        var pairs = blocking.Select((s, at) => (s, at))
            .Select(b => (Bad: b.at, Good: blocking.ToList().FindIndex(g => g.Route == b.s.Twin)))
            .Where(p => p.Good >= 0).ToList();
        Assert.True(pairs.Count >= 6, string.Join(", ", blocking.Select(s => $"{s.Name}→{s.Twin}")));
        Assert.All(pairs, p => Assert.True(colors[p.Good] == colors[p.Bad] && dashed[p.Good] && !dashed[p.Bad], $"{blocking[p.Bad].Name} {colors[p.Bad]}, {blocking[p.Good].Name} {colors[p.Good]} dashed {dashed[p.Good]}"));
        Assert.Equal(pairs.Count, pairs.Select(p => colors[p.Bad]).Distinct().Count());
        var mockGood = mock.Select((s, at) => (s, at)).Single(g => g.s.Verdict == ScenarioVerdict.Good).at;
        Assert.True(mockColors[mockGood] == "#2ca02c" && !mockDashed[mockGood] && mock.Select((s, at) => at).Where(at => at != mockGood).All(at => mockColors[at] != mockColors[mockGood]), string.Join(", ", mockColors));
    }

    private async Task<AppCatalogue> ReadAsync()
    {
        using var client = _app.CreateClient();
        return new AppCatalogue((await client.GetFromJsonAsync<CatalogueAnswer>(new Uri("/" + CatalogueAnswer.Route, UriKind.Relative), CompareJson.Options).DefaultTimeout())!);
    }
}
