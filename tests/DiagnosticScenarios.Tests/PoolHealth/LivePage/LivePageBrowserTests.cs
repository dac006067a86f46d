using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.LivePage;

/// <summary>
/// The live page in Debian's headless Chromium on a high-DPI screen, open through the shared observed runs: it started
/// each run's load with its own button, and what it showed and measured is read from it (see <see cref="BrowserObserver"/>).
/// Its lag is set beside the lag of the same samples in the same browser on the same page served through the app's own
/// Kestrel (a second tab, open for the whole run), where a page without a server of its own would be read.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class LivePageBrowserTests(ObservedRuns runs, ITestOutputHelper output)
{
    /// <summary>A sample is taken once a second: a page that shows each, the slowest included, within a second is live.</summary>
    private static readonly TimeSpan PageLagBound = TimeSpan.FromSeconds(1);

    /// <summary>Through the starved pool a sample waits behind the queued requests: seconds, not milliseconds.</summary>
    private static readonly TimeSpan KestrelLagFloor = TimeSpan.FromSeconds(2);

    /// <summary>How the second tab's page says it is served.</summary>
    private const string ServedThroughTheApp = "through-the-app";

    private const double KestrelLagAtLeastTimesThePages = 3;

    /// <summary>A reloaded page has its history back, and a new sample on it, within a few seconds.</summary>
    private static readonly TimeSpan ReloadBound = TimeSpan.FromSeconds(3);

    private const string StartedByThePage = "the page's Start load button";

    [ChromiumFact]
    public Task LivePage_ReceivesEachSampleWithinASecond_WhileThePageServedThroughKestrelLagsBySeconds_UnderTaskWait() => AssertLiveAsync(RunPlan.TaskWait);

    [ChromiumFact]
    public Task LivePage_ReceivesEachSampleWithinASecond_WhileThePageServedThroughKestrelLagsBySeconds_UnderTaskSleepWait() => AssertLiveAsync(RunPlan.TaskSleepWait);

    [ChromiumFact]
    public Task LivePage_ReloadedMidStarvation_HasItsChartsBackWithinAFewSeconds_UnderTaskWait() => AssertReloadAsync(RunPlan.TaskWait);

    [ChromiumFact]
    public Task LivePage_ReloadedMidStarvation_HasItsChartsBackWithinAFewSeconds_UnderTaskSleepWait() => AssertReloadAsync(RunPlan.TaskSleepWait);

    [ChromiumFact]
    public async Task LivePage_ShowsThreadsRisingAndStarvation_WhenItsButtonLoadsTaskWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var page = run.Record<BrowserRecord>();

        output.WriteLine($"{run}\npeak threads {page.BeforeLoad.PeakThreads} before the load, {page.End.PeakThreads} after; {page.End.StarvedSeconds} starved seconds shown");
        Assert.Equal(StartedByThePage, run.LoadStartedBy);
        Assert.Equal(run.Plan.Scenario, run.Load.GetProperty("scenario").GetString());
        Assert.Equal(RunPlan.Connections, run.Load.GetProperty("connections").GetInt32());
        Assert.True(page.End.PeakThreads >= page.BeforeLoad.PeakThreads + 10, $"threads went from {page.BeforeLoad.PeakThreads} to {page.End.PeakThreads}");
        Assert.True(page.End.StarvedSeconds >= 1, "the page never showed a starved second");
    }

    [ChromiumFact]
    public async Task LivePage_ShowsNoStarvation_UnderTaskAsyncWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskAsyncWait);

        var page = run.Record<BrowserRecord>();

        output.WriteLine($"{run}\npeak threads {page.End.PeakThreads}; {page.End.StarvedSeconds} starved seconds shown; {page.End.Samples} samples");
        Assert.Equal(StartedByThePage, run.LoadStartedBy);
        Assert.Equal(0, page.End.StarvedSeconds);
        Assert.Null(page.Reload);
    }

    /// <summary>
    /// The stack panel draws a capture with its own script: each site's line must read as the app's snapshot describes it
    /// (<see cref="BlockingSite.Describe"/>: the blocking call, its file and line or the invoker the JIT inlined it into,
    /// the route), not a second wording that drifts from the CLI's and the log's.
    /// </summary>
    [ChromiumFact]
    public async Task LivePage_StackPanel_ShowsTheAutomaticCaptureSiteBySite_AsTheAppsSnapshotDescribesIt_UnderTaskSleepWait()
    {
        var run = await runs.RunAsync(RunPlan.TaskSleepWait);

        var page = run.Record<BrowserRecord>().End.Stacks;
        var served = run.Record<StacksRecord>().Served;

        output.WriteLine($"{run}\nthe page shows the {page.Trigger} capture asked for at {page.RequestedAt}:\n{string.Join('\n', page.Lines)}");
        Assert.True(page.Trigger is not null && page.RequestedAt is not null, "the stack panel shows no capture");
        var requestedAt = DateTimeOffset.Parse(page.RequestedAt, CultureInfo.InvariantCulture);
        var capture = Assert.Single(served, c => c.Trigger == page.Trigger && c.RequestedAt == requestedAt);
        var snapshot = Assert.IsType<StackSnapshot>(capture.Snapshot);
        var described = snapshot.BlockedPoolSites.Take(ShownSites).Select(site => site.Describe(snapshot.PoolThreadCount)).ToList();
        Assert.NotEmpty(described);
        Assert.Equal(described, page.Lines);
    }

    /// <summary>How many sites the page's stack panel shows (<c>shownSites</c> in stacks.js).</summary>
    private const int ShownSites = 5;

    [ChromiumFact]
    public async Task LivePage_ShowsTheRunnersOwnFigures_WhenTheLoadRunEnds()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var page = run.Record<BrowserRecord>().End;
        var result = run.Load.GetProperty("result");
        var latency = result.GetProperty("latency");
        var failures = result.GetProperty("failures").GetInt64();

        output.WriteLine($"{run}\n{page.LoadStatus}\n{string.Join(", ", page.LoadFields.Select(f => $"{f.Key}: {f.Value}"))}\nthe runner: {result}");
        Assert.Equal("ended", page.LoadState);
        Assert.True(page.LoadResultShown, page.LoadStatus);
        Assert.Equal(result.GetProperty("requestsPerSecond").GetDouble().ToString("0.0", CultureInfo.InvariantCulture), page.LoadFields["requestsPerSecond"]);
        Assert.Equal($"{Whole(latency.GetProperty("average").GetDouble())} ms", page.LoadFields["latencyAverageMs"]);
        Assert.Equal($"{Whole(latency.GetProperty("p99").GetDouble())} ms", page.LoadFields["latencyP99Ms"]);
        Assert.Equal(failures == 0 ? "0" : $"{Whole(failures)} ({Whole(result.GetProperty("timeouts").GetInt64())} timed out)", page.LoadFields["failures"]);
        Assert.Equal($"{Whole(result.GetProperty("completed").GetInt64())} of {Whole(result.GetProperty("sent").GetInt64())}", page.LoadFields["completed"]);
    }

    [ChromiumFact]
    public async Task LivePage_SavesTheChartsAsASlideSizedPng_WithTheStarvationAndTheLoadOnThem()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var export = run.Record<BrowserRecord>().Export;
        var image = PngImage.Read(export.Bytes);
        // The first cell of the slide's grid holds the thread chart.
        var threadLine = image.Count(30, 100, 460, 470, (0x25, 0x63, 0xEB));
        var starvedShade = image.Count(0, 0, image.Width, image.Height, (250, 225, 225));
        var loadStart = image.Count(0, 0, image.Width, image.Height, (0x16, 0xA3, 0x4A), tolerance: 0);

        output.WriteLine($"{run}\n{export.Entry}: thread-line pixels {threadLine}, starved shading {starvedShade}, load-start mark {loadStart}");
        Assert.Equal((1920, 1080), (image.Width, image.Height));
        Assert.Equal((image.Width, image.Height, (long)export.Bytes.Length), (export.Entry.Width, export.Entry.Height, export.Entry.Bytes));
        Assert.EndsWith(".png", export.Entry.Name, StringComparison.Ordinal);
        Assert.True(threadLine > 300, $"the thread chart's line has {threadLine} pixels");
        Assert.True(starvedShade > 1000, $"the starved seconds' shading has {starvedShade} pixels");
        Assert.True(loadStart > 100, $"the load's start mark has {loadStart} pixels");
    }

    [ChromiumFact]
    public async Task LivePage_DrawsEveryChartAtTheScreensPixelRatio()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var page = run.Record<BrowserRecord>().End;

        output.WriteLine($"pixel ratio {page.PixelRatio}: {string.Join("; ", page.Canvases)}");
        Assert.Equal(SharedBrowser.PixelRatio, page.PixelRatio);
        Assert.Equal(7, page.Canvases.Count);
        Assert.All(page.Canvases, c =>
        {
            Assert.True(c.CssWidth > 0 && c.CssHeight > 0, c.ToString());
            Assert.Equal(((int)Math.Round(c.CssWidth * SharedBrowser.PixelRatio), (int)Math.Round(c.CssHeight * SharedBrowser.PixelRatio)), (c.Width, c.Height));
        });
    }

    [ChromiumFact]
    public async Task LivePage_LoadForm_OffersTheAppsDefaultsAndBoundsForARun()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var form = run.Record<BrowserRecord>().BeforeLoad.LoadForm;

        var limits = LoadRunLauncher.Limits;
        Assert.Equal(new PageInput(Invariant(limits.DefaultConnections), Invariant(limits.MaxConnections)), form["load-connections"]);
        Assert.Equal(new PageInput(Invariant(limits.DefaultDurationSeconds), Invariant(limits.MaxDurationSeconds)), form["load-duration"]);
    }

    [ChromiumFact]
    public async Task LivePage_SaysItIsServedOffThePool_WhenOpenedOnItsOwnServer()
    {
        var run = await runs.RunAsync(RunPlan.TaskWait);

        var page = run.Record<BrowserRecord>().End;

        output.WriteLine(page.ServedText);
        Assert.Equal("off-the-pool", page.Served);
    }

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);

    private async Task AssertLiveAsync(RunPlan plan)
    {
        var run = await runs.RunAsync(plan);

        var page = run.Record<BrowserRecord>();
        var kestrel = page.ThroughTheApp;
        var underLoad = run.SamplesUnderLoad();
        // Samples taken while the page reloaded reach the new page with its history, not live: the reload's own test.
        var reloading = page.Reload is { } reload ? (From: reload.At - TimeSpan.FromSeconds(1), To: reload.StreamOpenedAt) : default;
        var expected = underLoad.Where(s => s.TakenAt < reloading.From || s.TakenAt > reloading.To).ToList();
        var live = page.Arrivals.Where(a => a.Live).ToDictionary(a => a.Sequence);
        var missing = expected.Where(s => !live.ContainsKey(s.Sequence)).Select(s => s.Sequence).ToList();
        var pageLags = expected.Where(s => live.ContainsKey(s.Sequence)).Select(s => live[s.Sequence].Lag).ToList();
        var kestrelLags = underLoad.Select(s => kestrel.LagOf(s.Sequence, s.TakenAt)).ToList();
        var pageP95 = Lags.Percentile(pageLags, 0.95);
        var kestrelP95 = Lags.Percentile(kestrelLags.Select(k => k.Lag), 0.95);

        output.WriteLine($"{run}\n{underLoad.Count} samples under load, {underLoad.Count(s => s.Starved)} starved"
            + $"\nthe page (its own server): {Lags.Describe(pageLags)}"
            + $"\nthe same page served through the app's Kestrel ({kestrel.State.Served}): {Lags.Describe([.. kestrelLags.Select(k => k.Lag)])}, {kestrelLags.Count(k => !k.Arrived)} not arrived when the tab was read (counted with their wait so far)"
            + $"\nKestrel's p95 is {kestrelP95 / (pageP95 > TimeSpan.Zero ? pageP95 : TimeSpan.FromMilliseconds(1)):0.0}× the page's");
        Assert.True(underLoad.Count >= run.SecondsUnderLoad - 1, $"the live page's server streamed {underLoad.Count} samples taken in the load's {run.SecondsUnderLoad} s");
        Assert.Contains(underLoad, s => s.Starved);
        Assert.True(missing.Count == 0, $"samples {string.Join(", ", missing)} never reached the open page live");
        // Each sample, the slowest included.
        var pageMax = Lags.Percentile(pageLags, 1);
        Assert.True(pageMax <= PageLagBound, $"the page received a sample {pageMax.TotalMilliseconds:0} ms after it was taken");
        Assert.Equal(ServedThroughTheApp, kestrel.State.Served);
        Assert.True(kestrelP95 >= KestrelLagFloor, $"through Kestrel the samples lagged only {kestrelP95.TotalMilliseconds:0} ms at p95: the pool was not starved enough to show the difference");
        Assert.True(kestrelP95 >= pageP95 * KestrelLagAtLeastTimesThePages, $"Kestrel's p95 {kestrelP95.TotalMilliseconds:0} ms is not {KestrelLagAtLeastTimesThePages}× the page's {pageP95.TotalMilliseconds:0} ms");
    }

    private async Task AssertReloadAsync(RunPlan plan)
    {
        var run = await runs.RunAsync(plan);

        var reload = run.Record<BrowserRecord>().Reload;
        var samples = run.Record<StreamRecord>().Arrivals;
        var atReload = reload is null ? null : samples.FirstOrDefault(s => s.TakenAt >= reload.At);

        output.WriteLine($"{run}\n{reload}\nthe sample after the reload: starved {atReload?.Starved}, queue delay {atReload?.QueueDelay.TotalMilliseconds:0} ms");
        Assert.True(reload is not null, "the page never showed starvation, so it was never reloaded");
        Assert.True(atReload is not null, "no sample was taken after the reload");
        // Still mid-starvation: in the second after the reload a work item waited longer for a pool thread than the page
        // took to come back, so a page that needed the pool could not have. (The rule's verdict can flicker for a second
        // while the queue is long and the pool injects threads; the wait is the user's view of it.)
        Assert.True(atReload.QueueDelay > reload.HistoryBackAfter, $"the pool was no longer starving after the reload: a work item waited only {atReload.QueueDelay.TotalMilliseconds:0} ms for a thread, the page took {reload.HistoryBackAfter?.TotalMilliseconds:0} ms: {atReload.Sample}");
        Assert.True(reload.HistoryBackAfter <= ReloadBound, $"the reloaded page had drawn its {reload.SamplesBefore} samples again after {reload.HistoryBackAfter?.TotalMilliseconds:0} ms (null: never)");
        Assert.True(reload.LiveAgainAfter <= ReloadBound + TimeSpan.FromSeconds(1), $"the reloaded page drew a new sample after {reload.LiveAgainAfter?.TotalMilliseconds:0} ms (null: never)");
    }

    private static string Whole(double value) => Math.Round(value, MidpointRounding.AwayFromZero).ToString("#,0", CultureInfo.InvariantCulture);
}
