using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

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
            ThreadPool.GetMinThreads(out var appliedWorkers, out _);
            using var reset = await client.DeleteAsync(new Uri("/api/threadpool/minthreads", UriKind.Relative)).DefaultTimeout();
            var resetBody = await reset.Content.ReadFromJsonAsync<JsonElement>().DefaultTimeout();
            ThreadPool.GetMinThreads(out var resetWorkers, out _);

            Assert.Equal(HttpStatusCode.OK, applied.StatusCode);
            Assert.True(appliedBody.GetProperty("accepted").GetBoolean(), appliedBody.ToString());
            Assert.Equal(requested, appliedBody.GetProperty("minWorkerThreads").GetInt32());
            Assert.Equal(requested, appliedWorkers);
            Assert.Equal(HttpStatusCode.OK, reset.StatusCode);
            Assert.Equal(startupWorkers, resetBody.GetProperty("minWorkerThreads").GetInt32());
            Assert.Equal(startupWorkers, resetWorkers);
        }
        finally
        {
            ThreadPool.SetMinThreads(startupWorkers, startupIo);
        }
    }
}
