using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.LivePage;

/// <summary>
/// The live page's own server streams every second of a starved app, read by the test as an <c>EventSource</c> would read
/// it: a sample for every second, none skipped, each arriving at once; and it answers <c>GET /api/threadpool</c> at once.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class LivePageStreamTests(ObservedRuns runs, ITestOutputHelper output)
{
    // The sampler takes one a second on a thread of its own; a late one shows as a longer gap between two.
    private static readonly TimeSpan MaxGap = TimeSpan.FromMilliseconds(1600);

    [Fact]
    public async Task LivePageStream_HasNoHolesWhileStarved_UnderTaskSleepWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskSleepWait);

        var stream = run.Record<StreamRecord>();
        var samples = stream.Arrivals;
        // Seconds in which pool work waited longer than the gap allowed: a sampler on the pool would have skipped time.
        var starved = samples.Where(s => s.QueueDelay >= MaxGap).ToList();
        var gaps = samples.Zip(samples.Skip(1), (a, b) => b.TakenAt - a.TakenAt).ToList();

        output.WriteLine($"{run}\n{samples.Count} samples, {starved.Count} with a queue delay of {MaxGap.TotalMilliseconds:0} ms or more, {samples.Count(s => s.Starved)} starved by the detector's verdict; longest gap {gaps.DefaultIfEmpty().Max().TotalMilliseconds:0} ms");
        Assert.True(starved.Count >= 3, $"expected several seconds in which pool work waited {MaxGap.TotalMilliseconds:0} ms or more, got {starved.Count} of {samples.Count}");
        Assert.Equal(Enumerable.Range((int)samples[0].Sequence, samples.Count).Select(i => (long)i), samples.Select(s => s.Sequence));
        Assert.True(gaps.Max() < MaxGap, $"the sampler skipped time while the pool was starved: gaps {string.Join(",", gaps.Select(g => g.TotalMilliseconds))} ms");
        Assert.True(stream.StoppedAt - samples[^1].TakenAt < MaxGap, $"the last sample was taken at {samples[^1].TakenAt:HH:mm:ss.fff}, the stream stopped at {stream.StoppedAt:HH:mm:ss.fff}");
    }

    [Theory]
    [InlineData("taskwait")]
    [InlineData("tasksleepwait")]
    public async Task LivePageServer_StreamsEachSampleWithinASecond_AndAnswersTheMonitorWithinTwo_WhileThePoolStarves(string scenario)
    {
        var run = await runs.RunAsync(RunPlan.Named(scenario));

        var underLoad = run.SamplesUnderLoad();
        var lags = underLoad.Select(s => s.Lag).ToList();
        var monitor = run.Record<MonitorRecord>().Reads.Where(r => r.AskedAt >= run.LoadStartedAt && r.AskedAt <= run.StoppedAt).Select(r => r.AnsweredIn).ToList();

        output.WriteLine($"{run}\nlive page's stream, read by the test: {Lags.Describe(lags)}; {underLoad.Count(s => s.Starved)} starved seconds"
            + $"\nGET /api/threadpool on the live page's server: {Lags.Describe(monitor)}");
        Assert.True(underLoad.Count >= run.SecondsUnderLoad - 1, $"the live page's server streamed {underLoad.Count} samples taken in the load's {run.SecondsUnderLoad} s");
        Assert.Contains(underLoad, s => s.Starved);
        Assert.True(Lags.Percentile(lags, 1) < TimeSpan.FromSeconds(1), $"a sample reached the test {Lags.Percentile(lags, 1).TotalMilliseconds:0} ms after it was taken");
        Assert.True(monitor.Count >= run.SecondsUnderLoad / 2, $"the monitor was read {monitor.Count} times in the load's {run.SecondsUnderLoad} s");
        // Two seconds at worst: a loaded 2-core machine can hold one read for a second, while through the starved pool, as
        // Kestrel would serve the page, a read takes several seconds.
        Assert.True(Lags.Percentile(monitor, 1) < TimeSpan.FromSeconds(2), $"GET /api/threadpool took {Lags.Percentile(monitor, 1).TotalMilliseconds:0} ms to answer");
    }
}
