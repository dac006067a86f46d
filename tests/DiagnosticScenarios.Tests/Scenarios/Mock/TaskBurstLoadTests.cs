using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Mock;

/// <summary>The console experiment over HTTP: 1000 tasks that each wait one second, on a fresh server with a cold pool.</summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed partial class TaskBurstLoadTests(ITestOutputHelper output)
{
    private const int Count = 1000;
    private const int DelayMs = 1000;

    [Fact]
    public async Task TaskBurst_Async_FinishesWithinTwoDelays()
    {
        await using var server = await LoadExperiment.StartServerAsync();
        using var client = new HttpClient { BaseAddress = server.BaseAddress };

        var body = await client.GetStringAsync(BurstUri("async")).DefaultTimeout();

        output.WriteLine(body);
        var elapsedMs = ElapsedMsIn(body);
        Assert.True(elapsedMs <= 2 * DelayMs, $"{Count} awaiting tasks took {elapsedMs} ms, more than 2 × {DelayMs} ms: {body}");
    }

    [Fact]
    public async Task TaskBurst_Blocking_TakesAtLeastFiveDelays_WithItsTasksParkedInTaskWait_AndTheRuntimesViewIsTheCatalogues()
    {
        // The full blocking burst takes minutes on two processors: the pool adds about 4 threads a second, and every
        // Task.Delay completion waits in the queue behind the Task.Run items not yet started. Not being answered within
        // 6 delays proves "at least 5 delays" with a delay of room for the request's own way to the idle server.
        var patience = TimeSpan.FromMilliseconds(6 * DelayMs);
        var scenario = CatalogueData.Find(ScenarioCatalogue.Tutorial, "taskburst");
        await using var server = await LoadExperiment.StartServerAsync();
        using var client = new HttpClient { BaseAddress = server.BaseAddress };
        using var sampler = server.SampleThreadCount(TimeSpan.FromSeconds(1));
        // Recorded from outside as compare --diagnose records a loaded server: a wait trace open from before the request
        // to after the patience (the pool's adjustments by reason, the wait events), and a snapshot two seconds in, when
        // the burst holds every pool thread it has. Recording takes a fraction of one of the delays the assertion counts.
        using var diagnosis = await LoadDiagnosis.StartAsync(server.ProcessId, TimeSpan.FromMilliseconds(2 * DelayMs), CancellationToken.None)
            .TimeoutAfter(MeasurementCache.MeasurementTimeout);
        var clock = Stopwatch.StartNew();
        // No answer: still running after 6 delays.
        var (answered, body, _) = await TimeoutExtensions.AnswerWithinAsync(patience, giveUp => client.GetStringAsync(BurstUri("blocking"), giveUp));
        var elapsedMs = answered ? ElapsedMsIn(body!) : clock.ElapsedMilliseconds;
        sampler.Dispose();
        output.WriteLine($"{(answered ? body : "no answer")} after {clock.ElapsedMilliseconds} ms; server threads peak {sampler.Peak}");
        await diagnosis.FinishRecordingAsync(CancellationToken.None).TimeoutAfter(MeasurementCache.MeasurementTimeout);
        // Analysed after the burst, so that the analysis takes no core from the burst it times.
        var measured = await diagnosis.AnalyzeAsync(CancellationToken.None).TimeoutAfter(MeasurementCache.MeasurementTimeout);

        // The blocking burst stays unanswered for minutes while the pool injects a few threads a second.
        Assert.True(elapsedMs >= 5 * DelayMs, $"{Count} blocking tasks took only {elapsedMs} ms, less than 5 × {DelayMs} ms: {body}");

        // The Task.Run lambdas (<>c__DisplayClassN.<TaskBurst>b__0) parked in Task.Wait on their Task.Delay: the request's own
        // thread is not among them, it awaits Task.WhenAll.
        output.WriteLine(BlockedStacks.Describe(measured.Snapshot));
        BlockedStacks.AssertTopSiteNames(measured.Snapshot, scenario, BlockingKind.TaskWait);
        RuntimeViews.AssertIsTheCatalogues(measured, scenario, output, "taskburst (blocking)");
    }

    private static Uri BurstUri(string mode) =>
        new($"api/diagscenario/taskburst?count={Count}&mode={mode}&delayMs={DelayMs}", UriKind.Relative);

    private static long ElapsedMsIn(string body)
    {
        var match = ElapsedMs().Match(body);
        Assert.True(match.Success, $"no elapsedMs in '{body}'");
        return long.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture);
    }

    [GeneratedRegex(@"elapsedMs=(\d+)")]
    private static partial Regex ElapsedMs();
}
