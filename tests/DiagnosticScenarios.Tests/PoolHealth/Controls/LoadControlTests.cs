using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;

namespace DiagnosticScenarios.Tests.PoolHealth.Controls;

/// <summary>The page's load control starts the real load runner as a child process of the app.</summary>
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class LoadControlTests
{
    // The runner's start, its one-second load and its report, on two cores shared with the other classes that run in parallel.
    private static readonly TimeSpan RunPatience = TimeSpan.FromSeconds(60);

    // A run long enough that only a stop ends it within the patience above.
    private const int LongRunSeconds = 100;

    [Fact]
    public async Task Load_StartsTheRunnerAsASeparateProcess_OneRunAtATime()
    {
        await using var app = await HealthApp.StartAsync();
        using var client = app.CreateControlClient();

        using var started = await client.PostAsync(new Uri("/api/threadpool/load?scenario=diagscenario/taskasyncwait&connections=20&durationSeconds=1", UriKind.Relative), null).DefaultTimeout();
        var run = await started.Content.ReadFromJsonAsync<JsonElement>().DefaultTimeout();
        using var second = await client.PostAsync(new Uri("/api/threadpool/load?scenario=diagscenario/ping", UriKind.Relative), null).DefaultTimeout();
        var finished = await WaitForFinishAsync(client);

        Assert.Equal(HttpStatusCode.Accepted, started.StatusCode);
        Assert.NotEqual(app.ProcessId, run.GetProperty("processId").GetInt32());
        Assert.StartsWith("http://127.0.0.1:", run.GetProperty("target").GetString(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.Conflict, second.StatusCode);
        Assert.Equal(0, finished.GetProperty("exitCode").GetInt32());
        var report = finished.GetProperty("result");
        Assert.True(report.GetProperty("completed").GetInt64() > 0, report.ToString());
        Assert.Equal(20, report.GetProperty("connections").GetInt32());
    }

    [Fact]
    public async Task Load_StoppedOnRequest_EndsTheRunnerLongBeforeItsDuration_AndSaysItWasStopped()
    {
        await using var app = await HealthApp.StartAsync();
        using var client = app.CreateControlClient();

        using var started = await client.PostAsync(new Uri($"/api/threadpool/load?scenario=diagscenario/taskasyncwait&connections=4&durationSeconds={LongRunSeconds}", UriKind.Relative), null).DefaultTimeout();
        using var stopped = await client.DeleteAsync(new Uri("/api/threadpool/load", UriKind.Relative)).DefaultTimeout();
        var finished = await WaitForFinishAsync(client);

        Assert.Equal(HttpStatusCode.Accepted, started.StatusCode);
        Assert.Equal(HttpStatusCode.OK, stopped.StatusCode);
        Assert.NotEqual(0, finished.GetProperty("exitCode").GetInt32());
        Assert.Equal(JsonValueKind.Null, finished.GetProperty("result").ValueKind);
        Assert.StartsWith(LoadRunLauncher.StoppedOnRequest, finished.GetProperty("error").GetString(), StringComparison.Ordinal);
        var ran = finished.GetProperty("endedAt").GetDateTimeOffset() - finished.GetProperty("startedAt").GetDateTimeOffset();
        Assert.True(ran < TimeSpan.FromSeconds(LongRunSeconds / 2), $"the stopped run ended {ran.TotalSeconds:0.0} s after it started");
    }

    private static async Task<JsonElement> WaitForFinishAsync(HttpClient client)
    {
        var (finished, status) = await Poll.UntilAsync(
            () => client.GetFromJsonAsync<JsonElement>(new Uri("/api/threadpool/load", UriKind.Relative)),
            s => !s.GetProperty("current").GetProperty("running").GetBoolean(),
            RunPatience);
        Assert.True(finished, $"the load run was still running after {RunPatience}: {status}");
        return status.GetProperty("current");
    }
}
