using System.Net;
using Microsoft.AspNetCore.Mvc.Testing;

namespace DiagnosticScenarios.Tests;

public sealed class ScenarioEndpointTests(WebApplicationFactory<Program> factory) : IClassFixture<WebApplicationFactory<Program>>
{
    [Fact]
    public async Task Ping_AnswersSuccessPing()
    {
        using var client = factory.CreateClient();

        using var response = await client.GetAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("success:ping", await response.Content.ReadAsStringAsync());
    }
}
