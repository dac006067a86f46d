using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Controls;

/// <summary>
/// The live SetMinThreads control changes the pool of the process the app runs in, here the test host: it runs alone
/// and puts the minimum back (the reset under test, then a check that it held).
/// </summary>
[Collection(ProcessWideStateCollection.Name)]
public sealed class MinThreadsControlTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task MinThreads_AnswersWhatTheRuntimeAccepted_AndResetRestoresTheStartupValue()
    {
        ThreadPool.GetMinThreads(out var startupWorkers, out var startupIo);
        using var client = _app.CreateControlClient();
        var requested = startupWorkers + 3;
        try
        {
            using var applied = await client.PutAsync(new Uri($"/api/threadpool/minthreads?workers={requested}", UriKind.Relative), null).DefaultTimeout();
            var appliedBody = await applied.Content.ReadFromJsonAsync<JsonElement>().DefaultTimeout();
            var runsWithApplied = await MinimumTheAppRunsWithAsync(client);
            ThreadPool.GetMinThreads(out var appliedWorkers, out _);
            using var reset = await client.DeleteAsync(new Uri("/api/threadpool/minthreads", UriKind.Relative)).DefaultTimeout();
            var resetBody = await reset.Content.ReadFromJsonAsync<JsonElement>().DefaultTimeout();
            var runsWithReset = await MinimumTheAppRunsWithAsync(client);
            ThreadPool.GetMinThreads(out var resetWorkers, out _);

            Assert.Equal(HttpStatusCode.OK, applied.StatusCode);
            Assert.True(appliedBody.GetProperty("accepted").GetBoolean(), appliedBody.ToString());
            Assert.Equal(requested, appliedBody.GetProperty("minWorkerThreads").GetInt32());
            Assert.Equal(requested, runsWithApplied);
            Assert.Equal(requested, appliedWorkers);
            Assert.Equal(HttpStatusCode.OK, reset.StatusCode);
            Assert.Equal(startupWorkers, resetBody.GetProperty("minWorkerThreads").GetInt32());
            Assert.Equal(startupWorkers, runsWithReset);
            Assert.Equal(startupWorkers, resetWorkers);
        }
        finally
        {
            ThreadPool.SetMinThreads(startupWorkers, startupIo);
        }
    }

    // The minimum the app reports it runs with, as every way of raising it is read back (docs/scenarios.md, "The workaround").
    private static async Task<int> MinimumTheAppRunsWithAsync(HttpClient client) =>
        (await client.GetFromJsonAsync<JsonElement>(new Uri("/api/threadpool", UriKind.Relative)).DefaultTimeout()).GetProperty("minWorkerThreads").GetInt32();
}
