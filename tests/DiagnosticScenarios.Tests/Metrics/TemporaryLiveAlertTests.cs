using System.Net.Http.Json;
using System.Text.Json;
using DiagnosticScenarios.Controls;
using DiagnosticScenarios.Tests.Load;
using DiagnosticScenarios.Tests.ThreadPoolHealth;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Metrics;

/// <summary>
/// TEMPORARY, on the metrics branch only: the alert proven live on a run of its own, until the shared observed runs land.
/// There <see cref="PrometheusWatch"/> attaches to the taskwait and taskasyncwait runs as one more observer (start before
/// the load, stop after, hand back its <see cref="AlertHistory"/>) and these two assertions read its record; this class and
/// its own runs then go. Each run here is what an observed run does: a fresh server, Prometheus scraping its live page,
/// 125 connections for 20 s from the app's own runner child (the control the page's Start load button calls).
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class TemporaryLiveAlertTests(ITestOutputHelper output)
{
    private const int Connections = 125;
    private const int LoadSeconds = 20;
    private static readonly TimeSpan FiresWithin = TimeSpan.FromMinutes(1);

    [PrometheusFact]
    public async Task Alert_ReachesFiringWithinAMinute_UnderTaskWaitAt125Connections()
    {
        var (history, loadStartedAt) = await ObserveAsync("diagscenario/taskwait");

        Assert.True(history.FirstFiring is { } firing && firing - loadStartedAt < FiresWithin,
            $"the alert did not fire within {FiresWithin.TotalSeconds:0} s of the load's start at {loadStartedAt:HH:mm:ss}: {history}");
    }

    [PrometheusFact]
    public async Task Alert_NeverLeavesInactive_UnderTaskAsyncWaitAt125Connections()
    {
        var (history, _) = await ObserveAsync("diagscenario/taskasyncwait");

        Assert.True(history.States.Count == 0, history.ToString());
    }

    private async Task<(AlertHistory History, DateTimeOffset LoadStartedAt)> ObserveAsync(string scenario)
    {
        await using var server = await HealthApp.StartAsync();
        using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var page = await client.GetFromJsonAsync<JsonElement>(new Uri(server.BaseAddress, "api/threadpool/page")).DefaultTimeout();
        var livePage = new Uri(page.GetProperty("livePage").GetString() ?? throw new InvalidOperationException($"The live page is not listening: {page}"));
        await using var watch = await PrometheusWatch.StartAsync(livePage);

        using var start = new HttpRequestMessage(HttpMethod.Post, new Uri(server.BaseAddress,
            $"api/threadpool/load?scenario={scenario}&connections={Connections}&durationSeconds={LoadSeconds}"));
        start.Headers.Add(ControlGate.HeaderName, "1");
        (await client.SendAsync(start).DefaultTimeout()).EnsureSuccessStatusCode();
        var run = await CurrentLoadAsync(client, livePage);
        var startedAt = run.GetProperty("startedAt").GetDateTimeOffset();

        // The runner's own duration plus its drain; read from the live page, which answers while the pool starves.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(LoadSeconds + 45);
        while (run.GetProperty("running").GetBoolean())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"The {scenario} run was still running 45 s after its duration: {run}");
            }

            await Task.Delay(250);
            run = await CurrentLoadAsync(client, livePage);
        }

        var history = await watch.StopAsync();
        output.WriteLine($"{scenario}: load started {startedAt:HH:mm:ss}; {history}");
        return (history, startedAt);
    }

    private static async Task<JsonElement> CurrentLoadAsync(HttpClient client, Uri livePage) =>
        (await client.GetFromJsonAsync<JsonElement>(new Uri(livePage, "api/threadpool/load")).DefaultTimeout()).GetProperty("current");
}
