using System.Net.Http.Json;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.LoadRunner.Compare;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.RunnerCli;

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
        Assert.All(family.Scenarios, s => Assert.NotEqual(Verdict.Baseline, s.Verdict));
        Assert.Contains(family.Scenarios, s => s.Verdict == Verdict.Good);
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

    private async Task<AppCatalogue> ReadAsync()
    {
        using var client = _app.CreateClient();
        return (await client.GetFromJsonAsync<AppCatalogue>(new Uri("/" + AppCatalogue.Route, UriKind.Relative), CompareJson.Options).DefaultTimeout())!;
    }
}
