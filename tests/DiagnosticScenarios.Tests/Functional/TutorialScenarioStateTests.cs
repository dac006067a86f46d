using System.Net;
using Microsoft.AspNetCore.Mvc.Testing;

namespace DiagnosticScenarios.Tests.Functional;

/// <summary>The per-process bounds of Microsoft's tutorial scenarios, each on an app instance of its own.</summary>
public sealed class TutorialScenarioStateTests
{
    [Fact]
    public async Task Deadlock_AnswersSuccessOnce_ThenConflictAtOnce()
    {
        await using var factory = new WebApplicationFactory<Program>();
        using var client = factory.CreateClient();

        using var first = await client.GetAsync(new Uri("/api/diagscenario/deadlock", UriKind.Relative)).DefaultTimeout();
        using var second = await client.GetAsync(new Uri("/api/diagscenario/deadlock", UriKind.Relative)).TimeoutAfter(TimeSpan.FromSeconds(2));

        Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        Assert.Equal("success:deadlock", await first.Content.ReadAsStringAsync().DefaultTimeout());
        var problem = await ProblemDetailsAssert.IsProblemAsync(second, HttpStatusCode.Conflict);
        Assert.Contains("already deadlocked", problem.GetProperty("title").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task MemLeak_Answers409AndLeaksNothing_PastTheConfiguredCap()
    {
        await using var factory = new WebApplicationFactory<Program>()
            .WithWebHostBuilder(builder => builder.UseSetting("Scenarios:MemLeakCapKb", "10"));
        using var client = factory.CreateClient();

        using var response = await client.GetAsync(new Uri("/api/diagscenario/memleak/11", UriKind.Relative)).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.Conflict);
        Assert.Contains("cap of 10 KB", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }
}
