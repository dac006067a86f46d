using System.Net;
using System.Text.Json;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.Scenarios.Catalogue;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Hosting;

/// <summary>The OpenAPI document lists every route with its bounds and verdict; Swagger UI reads it.</summary>
public sealed class OpenApiTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Theory]
    [MemberData(nameof(CatalogueData.Routes), MemberType = typeof(CatalogueData))]
    public async Task OpenApiDocument_ListsEveryCatalogueRoute_WithItsVerdictInTheSummary(string route, ScenarioVerdict verdict)
    {
        using var document = await GetDocumentAsync();

        Assert.True(document.RootElement.GetProperty("paths").TryGetProperty(route, out var path), $"{route} is missing from /openapi/v1.json");
        var method = ScenarioCatalogue.Scenarios.Single(s => s.Route == route).Load?.Method ?? "GET";
        var summary = path.GetProperty(method.ToLowerInvariant()).GetProperty("summary").GetString();
        Assert.Contains(verdict == ScenarioVerdict.Baseline ? "Baseline" : verdict.ToString().ToUpperInvariant(), summary, StringComparison.Ordinal);
    }

    public static TheoryData<string, string, int, int> BoundedParameters => new()
    {
        { "/api/diagscenario/taskwait", "delayMs", 0, 60000 },
        { "/api/diagscenario/taskburst", "count", 1, 10000 },
        { "/api/diagscenario/highcpu/{milliseconds}", "milliseconds", 1, 60000 },
        { "/api/diagscenario/memspike/{seconds}", "seconds", 1, 300 },
        { "/api/diagscenario/memleak/{kb}", "kb", 1, 1000000 },
        { "/api/sqlscenario/async", "delayMs", 0, 60000 },
        { "/api/blocking/lock", "delayMs", 0, 60000 },
        { "/api/blocking/intermittent", "every", 1, 1000000 },
    };

    [Theory]
    [MemberData(nameof(BoundedParameters))]
    public async Task OpenApiDocument_GivesParameterBounds(string route, string parameter, int minimum, int maximum)
    {
        using var document = await GetDocumentAsync();

        var schema = document.RootElement.GetProperty("paths").GetProperty(route).GetProperty("get").GetProperty("parameters").EnumerateArray()
            .Single(p => p.GetProperty("name").GetString() == parameter)
            .GetProperty("schema");
        Assert.Equal(minimum, schema.GetProperty("minimum").GetInt32());
        Assert.Equal(maximum, schema.GetProperty("maximum").GetInt32());
    }

    [Fact]
    public async Task OpenApiDocument_ListsTaskBurstModes()
    {
        using var document = await GetDocumentAsync();

        var modes = document.RootElement.GetProperty("components").GetProperty("schemas").GetProperty("TaskBurstMode")
            .GetProperty("enum").EnumerateArray().Where(e => e.ValueKind == JsonValueKind.String).Select(e => e.GetString()!).ToArray();
        Assert.Equal(["blocking", "async"], modes);
    }

    [Fact]
    public async Task SwaggerUi_IsServed_AndReadsTheOpenApiDocument()
    {
        using var client = _app.CreateClient();

        using var page = await client.GetAsync(new Uri("/swagger/index.html", UriKind.Relative)).DefaultTimeout();
        using var config = await client.GetAsync(new Uri("/swagger/index.js", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.OK, page.StatusCode);
        Assert.Contains("swagger-ui", await page.Content.ReadAsStringAsync().DefaultTimeout(), StringComparison.Ordinal);
        Assert.Contains("/openapi/v1.json", await config.Content.ReadAsStringAsync().DefaultTimeout(), StringComparison.Ordinal);
    }

    private async Task<JsonDocument> GetDocumentAsync()
    {
        using var client = _app.CreateClient();
        using var response = await client.GetAsync(new Uri("/openapi/v1.json", UriKind.Relative)).DefaultTimeout();
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return JsonDocument.Parse(await response.Content.ReadAsStringAsync().DefaultTimeout());
    }
}
