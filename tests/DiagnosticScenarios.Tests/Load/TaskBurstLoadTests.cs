using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.Diagnosis;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Load;

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
        // Measured: 1003–1015 ms in 5 runs.
        Assert.True(elapsedMs <= 2 * DelayMs, $"{Count} awaiting tasks took {elapsedMs} ms, more than 2 × {DelayMs} ms: {body}");
    }

    [Fact]
    public async Task TaskBurst_Blocking_TakesAtLeastFiveDelays_WithItsTasksParkedInTaskWait()
    {
        // The full blocking burst takes minutes on two processors: the pool adds about 4 threads a second, and every
        // Task.Delay completion waits in the queue behind the Task.Run items not yet started. Not being answered within
        // 6 delays proves "at least 5 delays" with a delay of room for the request's own way to the idle server.
        var patience = TimeSpan.FromMilliseconds(6 * DelayMs);
        await using var server = await LoadExperiment.StartServerAsync();
        using var client = new HttpClient { BaseAddress = server.BaseAddress };
        using var sampler = server.SampleThreadCount(TimeSpan.FromSeconds(1));
        var clock = Stopwatch.StartNew();
        // Two seconds in, the burst holds every pool thread it has. The recording (printed) takes a fraction of one of the
        // delays the assertion counts.
        var trace = Path.Combine(Path.GetTempPath(), $"taskburst-{Guid.NewGuid():N}.nettrace");
        StackSnapshot snapshot;
        string? body = null;
        try
        {
            var recording = BlockedStacks.RecordAsync(server.ProcessId, TimeSpan.FromMilliseconds(2 * DelayMs), trace);
            // No answer: still running after 6 delays.
            var (answered, answer, _) = await TimeoutExtensions.AnswerWithinAsync(patience, giveUp => client.GetStringAsync(BurstUri("blocking"), giveUp));
            body = answered ? answer : null;

            sampler.Dispose();
            output.WriteLine($"{body ?? "no answer"} after {clock.ElapsedMilliseconds} ms; server threads peak {sampler.Peak}");

            // Analysed after the burst, so that the analysis takes no core from the burst it times.
            var recorded = await recording.TimeoutAfter(MeasurementCache.MeasurementTimeout);
            snapshot = await BlockedStacks.AnalyzeAsync(trace, recorded).TimeoutAfter(MeasurementCache.MeasurementTimeout);
        }
        finally
        {
            File.Delete(trace);
        }

        // Measured: no answer after 10 s in 5 runs (68 threads by then); by hand, still no answer after 130 s with 504 threads.
        var elapsedMs = body is null ? clock.ElapsedMilliseconds : ElapsedMsIn(body);
        Assert.True(elapsedMs >= 5 * DelayMs, $"{Count} blocking tasks took only {elapsedMs} ms, less than 5 × {DelayMs} ms: {body}");

        // The Task.Run lambdas (<>c__DisplayClassN.<TaskBurst>b__0) parked in Task.Wait on their Task.Delay: the request's own
        // thread is not among them, it awaits Task.WhenAll.
        output.WriteLine(BlockedStacks.Describe(snapshot));
        BlockedStacks.AssertTopSiteNames(snapshot, CatalogueData.Find(ScenarioCatalogue.Tutorial, "taskburst"), BlockingKind.TaskWait);
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
