using System.Net;
using DiagnosticScenarios.Scenarios.Mock;
using DiagnosticScenarios.Tests.Experiments;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Mock;

/// <summary>
/// The per-process bounds of Microsoft's tutorial scenarios. Each changes state the whole process keeps (a deadlock that
/// never ends, a static cache of leaked memory), so the class runs alone.
/// </summary>
[Collection(ProcessWideStateCollection.Name)]
public sealed class TutorialScenarioStateTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task Deadlock_AnswersSuccessOnce_ThenConflictAtOnce()
    {
        // A server process of its own: the 302 deadlocked threads can never be released, and end only with that process.
        await using var server = await LoadExperiment.StartServerAsync();
        using var client = new HttpClient { BaseAddress = server.BaseAddress };

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
        await using var capped = _app.With(("Scenarios:MemLeakCapKb", "10"));
        using var client = capped.CreateClient();
        var leak = capped.Services.GetRequiredService<MemoryLeakScenario>();
        var leakedBefore = leak.LeakedKb;

        using var response = await client.GetAsync(new Uri($"/api/diagscenario/memleak/{11 - leakedBefore}", UriKind.Relative)).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.Conflict);
        Assert.Contains("cap of 10 KB", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.Equal(leakedBefore, leak.LeakedKb);
    }
}
