using System.Net;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.PoolHealth.StackCapture;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.StackCapture;

/// <summary>
/// The app's capture of its own threads on the shared observed runs: taken in the starved process by the detector, logged
/// while the pool is still starved, served by <c>GET /api/threadpool/stacks</c>, and taken on request once the load is over.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class StackCaptureTests(ObservedRuns runs, ITestOutputHelper output)
{
    private const string CaptureLogged = "Stack capture (starvation)";

    [Fact]
    public async Task AutomaticCapture_IsLoggedWhileThePoolIsStillStarved_UnderTaskSleepWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskSleepWait);

        var line = run.LogLines(CaptureLogged) is [var first, ..] ? first : null;
        var samples = run.Record<StreamRecord>().Arrivals;
        var next = line?.At is { } at ? samples.FirstOrDefault(s => s.TakenAt >= at) : null;

        output.WriteLine($"{run}\n{line}\nthe next sample, at {next?.TakenAt:HH:mm:ss.fff}: starved {next?.Starved}");
        Assert.NotNull(line);
        // The app labels the threads its requests hold: the route is named whether the JIT kept the action's frame or not.
        Assert.Contains("serving GET /api/diagscenario/tasksleepwait", line.Text, StringComparison.Ordinal);
        Assert.Contains("Thread.Sleep", line.Text, StringComparison.Ordinal);
        Assert.Contains("Fix: await the task", line.Text, StringComparison.Ordinal);
        // Recorded by its child and analysed in the starved process, off its pool: the detector's next second still says starved.
        Assert.NotNull(next);
        Assert.True(next.Starved, $"the sample after the capture's log line was not starved: {next.Sample}");
    }

    [Theory]
    [InlineData("taskwait", BlockingKind.TaskWait)]
    [InlineData("tasksleepwait", BlockingKind.Sleep)]
    public async Task AutomaticCapture_IsServedByGetStacks_NamingTheAction(string scenario, BlockingKind blocking)
    {
        var run = await runs.RunAsync(RunPlan.Named(scenario));

        var stacks = run.Record<StacksRecord>();

        var automatic = stacks.Served.FirstOrDefault(c => c.Trigger == StackCaptureService.StarvationTrigger);

        output.WriteLine($"{run}\nserved: {string.Join(", ", stacks.Served.Select(c => $"{c.Trigger} at {c.RequestedAt:HH:mm:ss.fff}"))}");
        Assert.True(automatic is not null, $"GET /api/threadpool/stacks never served a capture the detector took; it last answered {(int)stacks.LastStatus}: {stacks.LastBody}");
        AssertNames(automatic, scenario, blocking);
    }

    [Fact]
    public async Task CaptureOnRequest_IsTakenThen_AndFindsNoPoolThreadBlockedInTheApp_OnceTheTaskWaitLoadIsOver()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var stacks = run.Record<StacksRecord>();
        var posted = stacks.Posted;

        output.WriteLine($"{run}\nserved: {string.Join(", ", stacks.Served.Select(c => $"{c.Trigger} at {c.RequestedAt:HH:mm:ss.fff}"))}"
            + $"\nPOST sent at {posted?.SentAt:HH:mm:ss.fff}, answered {(int?)posted?.Status} in {posted?.AnsweredIn.TotalMilliseconds:0} ms: "
            + $"{posted?.Capture?.Trigger} at {posted?.Capture?.RequestedAt:HH:mm:ss.fff}, top site {posted?.Capture?.Snapshot?.TopBlockedPoolSite()?.Describe(posted.Capture.Snapshot.PoolThreadCount) ?? "none"}");
        Assert.NotNull(posted);
        Assert.True(posted.Status == HttpStatusCode.OK, $"POST /api/threadpool/stacks answered {(int)posted.Status}: {posted.Body}");
        // A capture of now, not the detector's of the starvation a moment ago (which GET served, naming TaskWait).
        Assert.Equal(StackCaptureService.RequestTrigger, posted.Capture!.Trigger);
        Assert.True(posted.Capture.RequestedAt >= posted.SentAt, $"the capture answered was asked for at {posted.Capture.RequestedAt:HH:mm:ss.fff}, before the POST");
        Assert.NotNull(posted.Capture.Snapshot);
        // No pool thread blocked in the app's code, of any kind.
        var blockedInApp = posted.Capture.Snapshot.PoolGroupsBlockedInApp().ToList();
        Assert.True(blockedInApp.Count == 0, $"pool threads still blocked in the app: {string.Join("; ", blockedInApp.Select(g => $"{g.Threads} in {g.Blocking!.Name}"))}");
    }

    // The page's Capture now goes to the page's own server, whose threads are not the pool's: pressed while the pool starves
    // it answers in the capture's own time, where the app's Kestrel waits seconds for a pool thread (the Kestrel tab's lag).
    [Fact]
    public async Task CaptureNow_OnThePagesOwnServer_AnswersWithinSecondsWhileThePoolStarves_NamingTaskWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var posted = run.Record<StacksRecord>().PostedToThePageWhileStarved;

        output.WriteLine($"{run}\nPOST to the page's server sent at {posted?.SentAt:HH:mm:ss.fff}, answered {(int?)posted?.Status} in {posted?.AnsweredIn.TotalMilliseconds:0} ms: "
            + $"{posted?.Capture?.Trigger} at {posted?.Capture?.RequestedAt:HH:mm:ss.fff}");
        Assert.True(posted is not null, "the detector never declared starvation while the load ran, so Capture now was not pressed");
        Assert.True(posted.Status == HttpStatusCode.OK, $"POST /api/threadpool/stacks on the page's server answered {(int)posted.Status}: {posted.Body}");
        Assert.True(posted.AnsweredIn < CaptureNowPatience, $"the capture took {posted.AnsweredIn.TotalSeconds:0.0} s to answer");
        AssertNames(posted.Capture!, "taskwait", BlockingKind.TaskWait);
    }

    private static readonly TimeSpan CaptureNowPatience = TimeSpan.FromSeconds(5);

    private void AssertNames(StackCaptureResult capture, string scenario, BlockingKind blocking)
    {
        Assert.NotNull(capture.Snapshot);
        var top = capture.Snapshot.TopBlockedPoolSite();
        output.WriteLine($"{capture.Trigger} at {capture.RequestedAt:HH:mm:ss.fff}: {top?.Describe(capture.Snapshot.PoolThreadCount)} ({capture.Snapshot.CaptureMs} + {capture.Snapshot.AnalysisMs} ms)\n{BlockedStacks.Describe(capture.Snapshot)}");
        Assert.NotNull(top);
        var expected = CatalogueData.Find(ScenarioCatalogue.Mock, scenario);
        Assert.True(top.InlinedInto is not null || BlockedStacks.NamesLine(top.AppFrames, expected.Action), $"the top site neither says the JIT inlined the action nor carries a line of {expected.Action}'s body");
        Assert.Contains($"serving GET {expected.Route} ", top.RequestsSeen, StringComparison.Ordinal);
        Assert.Equal(blocking, top.Blocking.Kind);
        // Taken at the starvation event: most of the pool threads parked in a call are parked in this one site. Not most of all
        // pool threads: the rest may be idle, just injected or between requests. One site, though the cold server's first
        // requests may each have compiled a copy of the action's invoker (BlockingSitesTests).
        var parked = capture.Snapshot.BlockedPoolSites.Sum(s => s.Threads);
        Assert.True(2 * top.Threads > parked, $"the top site holds {top.Threads} of the {parked} parked pool threads ({capture.Snapshot.PoolThreadCount} in all), not most");
    }
}
