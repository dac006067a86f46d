using System.Net;
using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.StackCapture;
using DiagnosticScenarios.Tests.Load;
using DiagnosticScenarios.Tests.Observed;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>
/// The app's capture of its own threads on the shared observed runs: taken in the starved process by the detector, logged
/// while the pool is still starved, served by <c>GET /api/threadpool/stacks</c>, and taken on request during a load.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class StackCaptureTests(ObservedRuns runs, ITestOutputHelper output)
{
    private const string CaptureLogged = "Stack capture (starvation)";

    // A capture takes about half a second; one in progress when the request came was asked for at most that long before.
    private static readonly TimeSpan JoinedCaptureAge = TimeSpan.FromSeconds(2);

    [Fact]
    public async Task AutomaticCapture_IsLoggedWhileThePoolIsStillStarved_UnderTaskSleepWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskSleepWait);

        var line = run.LogLines(CaptureLogged) is [var first, ..] ? first : null;
        var samples = run.Record<StreamRecord>(s => s.Source == StreamSource.LivePage).Arrivals;
        var next = line?.At is { } at ? samples.FirstOrDefault(s => s.TakenAt >= at) : null;

        output.WriteLine($"{run}\n{line}\nthe next sample, at {next?.TakenAt:HH:mm:ss.fff}: starved {next?.Starved}");
        Assert.NotNull(line);
        Assert.Contains("StarvationScenariosController.TaskSleepWait", line.Text, StringComparison.Ordinal);
        Assert.Contains("Thread.Sleep", line.Text, StringComparison.Ordinal);
        // Taken and analysed in the starved process, off its pool: the detector's next second still says starved.
        Assert.NotNull(next);
        Assert.True(next.Starved, $"the sample after the capture's log line was not starved: {next.Sample}");
    }

    [Theory]
    [InlineData("taskwait", "StarvationScenariosController.TaskWait", BlockingKind.TaskWait)]
    [InlineData("tasksleepwait", "StarvationScenariosController.TaskSleepWait", BlockingKind.Sleep)]
    public async Task AutomaticCapture_IsServedByGetStacks_NamingTheAction(string scenario, string action, BlockingKind blocking)
    {
        var run = await runs.RunAsync(RunPlan.Named(scenario));

        var stacks = run.Record<StacksRecord>();

        var automatic = stacks.Served.FirstOrDefault(c => c.Trigger == StackCaptureService.StarvationTrigger);

        output.WriteLine($"{run}\nserved: {string.Join(", ", stacks.Served.Select(c => $"{c.Trigger} at {c.RequestedAt:HH:mm:ss.fff}"))}");
        Assert.True(automatic is not null, $"GET /api/threadpool/stacks never served a capture the detector took; it last answered {(int)stacks.LastStatus}: {stacks.LastBody}");
        AssertNames(automatic, action, blocking);
    }

    [Fact]
    public async Task CaptureOnRequest_DuringTheLoad_IsTakenThenAndNamesTaskWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var posted = run.Record<StacksRecord>().Posted;

        output.WriteLine($"{run}\nPOST sent at {posted?.SentAt:HH:mm:ss.fff}, answered {posted?.Status} in {posted?.AnsweredIn.TotalMilliseconds:0} ms");
        Assert.NotNull(posted);
        Assert.True(posted.Status == HttpStatusCode.OK, $"POST /api/threadpool/stacks answered {posted.Status}: {posted.Body}");
        // Taken for this request, or the detector's capture in progress that it joined; never an older one.
        Assert.True(posted.Capture!.RequestedAt >= posted.SentAt - JoinedCaptureAge, $"the capture answered was asked for at {posted.Capture.RequestedAt:HH:mm:ss.fff} ({posted.Capture.Trigger})");
        AssertNames(posted.Capture, "StarvationScenariosController.TaskWait", BlockingKind.TaskWait);
    }

    private void AssertNames(StackCaptureResult capture, string action, BlockingKind blocking)
    {
        Assert.NotNull(capture.Snapshot);
        var top = capture.Snapshot.TopBlockedPoolSite();
        output.WriteLine($"{capture.Trigger} at {capture.RequestedAt:HH:mm:ss.fff}: {top?.Describe(capture.Snapshot.PoolThreadCount)} ({capture.Snapshot.CaptureMs} + {capture.Snapshot.AnalysisMs} ms)");
        Assert.NotNull(top);
        Assert.Contains(action, top.AppFrames);
        Assert.Equal(blocking, top.Blocking.Kind);
        Assert.True(top.Threads >= 2, $"expected the load to park at least the pool's two starting threads, got {top.Threads}");
    }
}
