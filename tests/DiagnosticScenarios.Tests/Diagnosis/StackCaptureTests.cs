using System.Diagnostics;
using System.Net;
using System.Net.Http.Json;
using System.Text.RegularExpressions;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.Controls;
using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.StackCapture;
using DiagnosticScenarios.Tests.Load;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>The app's capture of its own threads, taken in its own process by the detector, served and retaken over HTTP.</summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed partial class StackCaptureTests(ITestOutputHelper output)
{
    private const int HeldRequests = 20;
    private const int HoldMs = 8000;
    private static readonly Uri Stacks = new("api/threadpool/stacks", UriKind.Relative);

    [Fact]
    public async Task AutomaticCapture_UnderTaskWait_IsServedByGet_AndPostTakesAnother_BothNamingTaskWait()
    {
        await using var server = await BlockedServer.StartAsync();
        // Reading a capture is a control as much as taking one: every request carries the header.
        using var client = new HttpClient { BaseAddress = server.Server.BaseAddress, Timeout = TimeSpan.FromSeconds(2) };
        client.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");
        using var before = await client.GetAsync(Stacks).DefaultTimeout();
        // Each request is sent again as it ends: the capture POSTed once the GET is answered must find the requests parked
        // however late the starved server answers (the poll allows 15 s, one request lasts 8 s), not only if it beats the hold.
        server.Loop("taskwait", HeldRequests, HoldMs);

        // Cooperative blocking lets the pool recover within seconds, while the first requests are still held.
        var automatic = await PollLatestAsync(client, server, TimeSpan.FromSeconds(15));
        using var post = await client.PostAsync(Stacks, content: null).TimeoutAfter(TimeSpan.FromSeconds(10));
        var requested = await post.Content.ReadFromJsonAsync<StackCaptureResult>().DefaultTimeout();

        Assert.Equal(HttpStatusCode.NotFound, before.StatusCode);
        Assert.Equal(StackCaptureService.StarvationTrigger, automatic.Trigger);
        AssertNames(automatic, "taskwait", BlockingKind.TaskWait);
        Assert.Contains(server.Server.Output.Split('\n'), line => line.Contains("Stack capture (starvation)", StringComparison.Ordinal)
            && line.Contains("serving GET /api/diagscenario/taskwait", StringComparison.Ordinal));
        Assert.Equal(HttpStatusCode.OK, post.StatusCode);
        Assert.Equal(StackCaptureService.RequestTrigger, requested!.Trigger);
        AssertNames(requested, "taskwait", BlockingKind.TaskWait);
    }

    [Fact]
    public async Task AutomaticCapture_UnderTaskSleepWait_IsLoggedWhileThePoolIsStillStarved()
    {
        await using var server = await BlockedServer.StartAsync();
        var held = Stopwatch.StartNew();
        server.Hold("tasksleepwait", HeldRequests, HoldMs);

        // No request can finish before HoldMs, and with two threads injected a second the pool stays starved all along:
        // a capture logged before then was taken and analysed in the starved process, off its pool.
        string? line = null;
        while (held.Elapsed < TimeSpan.FromMilliseconds(HoldMs) && line is null)
        {
            await Task.Delay(100);
            line = server.Server.Output.Split('\n').FirstOrDefault(l => l.Contains("Stack capture (starvation)", StringComparison.Ordinal));
        }

        output.WriteLine($"after {held.Elapsed.TotalSeconds:0.0} s: {line}");
        Assert.NotNull(line);
        // The app labels the threads its requests hold: the route is named whether the JIT kept the action's frame or not.
        Assert.Contains("serving GET /api/diagscenario/tasksleepwait", line, StringComparison.Ordinal);
        Assert.Contains("Thread.Sleep", line, StringComparison.Ordinal);
        Assert.Contains("Fix: await the task", line, StringComparison.Ordinal);
        Assert.Matches(StarvationWarning(), server.Server.Output);
    }

    private async Task<StackCaptureResult> PollLatestAsync(HttpClient client, BlockedServer server, TimeSpan within)
    {
        var started = Stopwatch.StartNew();
        while (true)
        {
            try
            {
                using var response = await client.GetAsync(Stacks);
                if (response.StatusCode == HttpStatusCode.OK)
                {
                    var result = (await response.Content.ReadFromJsonAsync<StackCaptureResult>())!;
                    output.WriteLine($"GET answered a capture after {started.Elapsed.TotalSeconds:0.0} s");
                    return result;
                }
            }
            catch (TaskCanceledException)
            {
                // A starved server answers late: ask again.
            }

            Assert.True(started.Elapsed < within, $"no capture served within {within}:\n{server.Server.Output}");
            await Task.Delay(250);
        }
    }

    private void AssertNames(StackCaptureResult capture, string scenario, BlockingKind blocking)
    {
        Assert.NotNull(capture.Snapshot);
        var top = capture.Snapshot.TopBlockedPoolSite();
        output.WriteLine($"{capture.Trigger}: {top?.Describe(capture.Snapshot.PoolThreadCount)} ({capture.Snapshot.CaptureMs} + {capture.Snapshot.AnalysisMs} ms)");
        Assert.NotNull(top);
        var expected = CatalogueData.Find(ScenarioCatalogue.Mock, scenario);
        Assert.True(top.InlinedInto is not null || BlockedStacks.NamesLine(top.AppFrames, expected.Action), $"the top site neither says the JIT inlined the action nor carries a line of {expected.Action}'s body");
        Assert.Contains($"serving GET {expected.Route} ", top.RequestsSeen, StringComparison.Ordinal);
        Assert.Equal(blocking, top.Blocking.Kind);
        Assert.True(top.Threads >= 2, $"expected the held requests to park at least the pool's two starting threads, got {top.Threads}");
    }

    [GeneratedRegex("Thread-pool starvation: a queued work item waited")]
    private static partial Regex StarvationWarning();
}
