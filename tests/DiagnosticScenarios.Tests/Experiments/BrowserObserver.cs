using System.Diagnostics;
using System.Globalization;
using DiagnosticScenarios.PoolHealth.Controls;
using OpenQA.Selenium;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// The live page, open in a real browser for the whole run, as a person at a workshop would have it: opened before the
/// load, the load started with its own Start load button, reloaded once it shows starvation, and, once the run is over,
/// its load panel read and its charts saved with its own button. Beside it, in a second tab, the same page served through
/// the app's Kestrel (its files and its stream), where a page without a server of its own would be read. What each page
/// measured itself (when each sample arrived) is read from it.
/// </summary>
internal sealed class BrowserObserver(SharedBrowser browser) : IRunObserver
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    // The stack panel's poll (pollMs in stacks.js) and a second more.
    private static readonly TimeSpan StacksPollPatience = TimeSpan.FromSeconds(6);

    // How long after the reload the documents' picture waits, so its charts show more of the climb than the history alone.
    private static readonly TimeSpan PictureSettle = TimeSpan.FromSeconds(3);

    /// <summary>
    /// A folder for the documents' picture of the page: when <c>DOCS_SCREENSHOT_DIR</c> names one, each run whose page
    /// says it is starved saves <c>live-page-{scenario}-starved.png</c> there (scripts/refresh-screenshot.sh).
    /// </summary>
    private static string? PictureFolder => Environment.GetEnvironmentVariable("DOCS_SCREENSHOT_DIR") is { Length: > 0 } folder ? folder : null;

    // What the page shows and measured, as JSON: its figures, its panels and its own record of each sample's arrival.
    private const string PageStateScript = """
        ({
          samples: Number(document.body.dataset.samples ?? 0),
          latestSample: Number(document.body.dataset.latestSample ?? 0),
          peakThreads: Number(document.body.dataset.peakThreads ?? 0),
          starvedSeconds: Number(document.body.dataset.starvedSeconds ?? 0),
          pixelRatio: Number(document.body.dataset.pixelRatio ?? 0),
          status: document.getElementById('status').dataset.state,
          served: document.getElementById('served').dataset.served,
          servedText: document.getElementById('served').textContent,
          loadState: document.getElementById('load-run').dataset.state,
          loadStatus: document.getElementById('load-status').textContent,
          loadResultShown: !document.getElementById('load-result').hidden,
          loadFields: Object.fromEntries([...document.querySelectorAll('#load-result [data-field]')].map((e) => [e.dataset.field, e.textContent])),
          scenarios: document.getElementById('load-scenario').options.length,
          wired: !document.getElementById('load-start').disabled,
          loadForm: Object.fromEntries(['load-connections', 'load-duration'].map((id) => [id, { value: document.getElementById(id).value, max: document.getElementById(id).max }])),
          streamOpenedAt: window.livePage?.streamOpenedAt ?? 0,
          arrivals: window.livePage?.arrivals ?? [],
          exports: window.livePage?.exports ?? [],
          stacks: {
            trigger: document.getElementById('stacks-groups').dataset.trigger ?? null,
            requestedAt: document.getElementById('stacks-groups').dataset.requestedAt ?? null,
            lines: [...document.querySelectorAll('#stacks-groups > details > summary')].map((e) => e.textContent),
          },
          canvases: [...document.querySelectorAll('.charts canvas')].map((c) => ({ id: c.id, width: c.width, height: c.height, cssWidth: c.clientWidth, cssHeight: c.clientHeight })),
        })
        """;

    public string Name => "the live page in headless Chromium";

    public Task<IObservation> AttachAsync(RunContext run) => Task.Run(IObservation () =>
    {
        var driver = browser.Driver;
        driver.Navigate().GoToUrl(run.LivePage);
        var livePage = driver.CurrentWindowHandle;
        SharedBrowser.WaitUntil(() => State() is { Samples: > 0, Scenarios: > 0, Wired: true }, Patience, "draw its first sample, list the scenarios and wire its buttons");
        var beforeLoad = State();
        driver.SwitchTo().NewWindow(WindowType.Tab);
        driver.Navigate().GoToUrl(new Uri(run.App, "index.html"));
        SharedBrowser.WaitUntil(() => State() is { Samples: > 0 }, Patience, "draw its first sample through the app");
        var throughTheApp = driver.CurrentWindowHandle;
        driver.SwitchTo().Window(livePage);
        return new Observation(browser, run, beforeLoad, livePage, throughTheApp);
    });

    private PageState State() => browser.Read<PageState>(PageStateScript);

    private sealed class Observation(SharedBrowser browser, RunContext run, PageState beforeLoad, string livePage, string throughTheApp) : IObservation, ILoadStarter
    {
        private IReadOnlyList<PageArrival> _beforeReload = [];
        private Task<PageReload?> _reloading = Task.FromResult<PageReload?>(null);

        private OpenQA.Selenium.Chrome.ChromeDriver Driver => browser.Driver;

        public Task<string> StartLoadAsync(RunPlan plan) => Task.Run(() =>
        {
            Driver.FindElement(By.Id("load-scenario")).SendKeys(plan.Scenario);
            SetValue("load-connections", RunPlan.Connections);
            SetValue("load-duration", plan.LoadSeconds);
            var chosen = Driver.FindElement(By.Id("load-scenario")).GetDomProperty("value");
            if (chosen != plan.Scenario)
            {
                throw new InvalidOperationException($"The page's scenario list chose {chosen}, not {plan.Scenario}.");
            }

            Driver.FindElement(By.Id("load-start")).Click();
            SharedBrowser.WaitUntil(() => State().LoadState == "running", Patience, "show the load running");
            _reloading = Task.Run(ReloadOnceStarved);
            return "the page's Start load button";
        });

        public Task<object> StopAsync() => Task.Run(async () =>
        {
#pragma warning disable VSTHRD003 // deliberate: this observation's own background work; tests have no SynchronizationContext to deadlock on
            var reload = await _reloading.TimeoutAfter(Patience + Patience);
#pragma warning restore VSTHRD003
            if (run.Plan.End == RunEnd.RunnerExits)
            {
                // The page polls the run every second: its end shows within a poll or two.
                SharedBrowser.WaitUntil(() => State().LoadState is "ended" or "failed", Patience, "show the load run's end");
            }

            // The page reads the latest capture every five seconds, and the reload mid-starvation starts that over: when the
            // app holds a capture, the page is read once it shows one, however slow the machine.
            if (await AppHoldsACaptureAsync())
            {
                await Poll.UntilAsync(() => State().Stacks.Trigger is not null, StacksPollPatience);
            }

            var export = Export();
            var end = State();
            var scenario = run.Plan.Scenario[(run.Plan.Scenario.LastIndexOf('/') + 1)..];
            await File.WriteAllBytesAsync(Path.Combine(SharedBrowser.Artifacts, $"live-page-{scenario}.png"), export.Bytes);

            // The tab served through the app, read and closed (its stream with it); then the page's stream, before the server goes.
            Driver.SwitchTo().Window(throughTheApp);
            var readAt = DateTimeOffset.UtcNow;
            var servedThroughTheApp = new PageThroughTheApp(State(), readAt);
            Driver.Close();
            Driver.SwitchTo().Window(livePage);
            await Driver.Navigate().GoToUrlAsync("about:blank");
            var arrivals = _beforeReload.Concat(end.Arrivals).GroupBy(a => a.Sequence).Select(g => g.OrderByDescending(a => a.Live).First()).OrderBy(a => a.Sequence).ToList();
            return (object)new BrowserRecord(beforeLoad, end, arrivals, reload, export, servedThroughTheApp);
        });

        private async Task<bool> AppHoldsACaptureAsync()
        {
            using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(5) };
            client.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");
            using var response = await client.GetAsync(new Uri(run.LivePage, "api/threadpool/stacks"));
            return response.IsSuccessStatusCode;
        }

        private void SetValue(string id, int value)
        {
            var input = Driver.FindElement(By.Id(id));
            input.Clear();
            input.SendKeys(value.ToString(CultureInfo.InvariantCulture));
        }

        private PageState State() => browser.Read<PageState>(PageStateScript);

        // Once the page says the pool is starved, a person reloads it: how long until it has its charts back, and a sample
        // taken after the reload on them.
        private PageReload? ReloadOnceStarved()
        {
            while (!run.Stopping.IsCancellationRequested)
            {
                var state = State();
                if (state.Status == "starved")
                {
                    _beforeReload = state.Arrivals;
                    var at = DateTimeOffset.UtcNow;
                    var clock = Stopwatch.StartNew();
                    Driver.Navigate().Refresh();
                    TimeSpan? backlog = null;
                    TimeSpan? live = null;
                    var after = State();
                    while (live is null && clock.Elapsed < Patience)
                    {
                        after = State();
                        backlog ??= after.Samples >= state.Samples ? clock.Elapsed : null;
                        live = backlog is not null && after.LatestSample >= at.ToUnixTimeMilliseconds() ? clock.Elapsed : null;
                        Thread.Sleep(25);
                    }

                    var reload = new PageReload(at, state.Samples, backlog, live, after.Samples, DateTimeOffset.FromUnixTimeMilliseconds((long)after.StreamOpenedAt));
                    if (PictureFolder is { } folder && live is not null)
                    {
                        SavePictureWhileStarved(folder);
                    }

                    return reload;
                }

                run.Stopping.WaitHandle.WaitOne(TimeSpan.FromMilliseconds(200));
            }

            return null;
        }

        // The page's top as a reader sees it, at one CSS pixel a pixel, taken only while its status line still says starved.
        private void SavePictureWhileStarved(string folder)
        {
            run.Stopping.WaitHandle.WaitOne(PictureSettle);
            if (State().Status != "starved")
            {
                return;
            }

            // Down to the table of who holds the threads: the figures, the charts and the endpoints, not the scenario list.
            var size = browser.Read<PageSize>("""
                ({
                  width: document.documentElement.scrollWidth,
                  height: Math.min(document.documentElement.scrollHeight, document.getElementById('endpoints').closest('section').getBoundingClientRect().bottom + window.scrollY + 16),
                })
                """);
            var shot = (Dictionary<string, object?>)Driver.ExecuteCdpCommand("Page.captureScreenshot", new Dictionary<string, object?>
            {
                ["format"] = "png",
                ["captureBeyondViewport"] = true,
                ["clip"] = new Dictionary<string, object?> { ["x"] = 0, ["y"] = 0, ["width"] = size.Width, ["height"] = size.Height, ["scale"] = 1 / SharedBrowser.PixelRatio },
            })!;
            var scenario = run.Plan.Scenario[(run.Plan.Scenario.LastIndexOf('/') + 1)..];
            Directory.CreateDirectory(folder);
            File.WriteAllBytes(Path.Combine(folder, $"live-page-{scenario}-starved.png"), Convert.FromBase64String((string)shot["data"]!));
        }

        // The page's own button, then the file the browser saved.
        private PageExport Export()
        {
            var exports = State().Exports.Count;
            var before = browser.Downloads.GetFiles("*.png").Select(f => f.Name).ToHashSet();
            Driver.FindElement(By.Id("export-png")).Click();
            PageExportEntry? entry = null;
            FileInfo? file = null;
            SharedBrowser.WaitUntil(() =>
            {
                entry = State().Exports.Skip(exports).FirstOrDefault();
                file = entry is null ? null : browser.Downloads.GetFiles(entry.Name).FirstOrDefault(f => !before.Contains(f.Name));
                return file is not null && file.Length == entry!.Bytes;
            }, Patience, "save its charts as a PNG in the download folder");
            return new PageExport(entry!, File.ReadAllBytes(file!.FullName));
        }
    }
}

/// <summary>What the browser saw: the page before the load and at the end, every sample's arrival, the reload and the export.</summary>
/// <param name="BeforeLoad">The page once open, before the load started.</param>
/// <param name="End">The page once the run was over.</param>
/// <param name="Arrivals">When each sample arrived on the page, before and after the reload.</param>
/// <param name="Reload">The reload once the page showed starvation; null when it never did.</param>
/// <param name="Export">The PNG the page's Save button produced, as the browser saved it.</param>
/// <param name="ThroughTheApp">The same page served through the app's Kestrel, in a second tab for the whole run.</param>
internal sealed record BrowserRecord(PageState BeforeLoad, PageState End, IReadOnlyList<PageArrival> Arrivals, PageReload? Reload, PageExport Export, PageThroughTheApp ThroughTheApp);

/// <summary>The page served through the app's Kestrel, as read once the run was over.</summary>
internal sealed record PageThroughTheApp(PageState State, DateTimeOffset ReadAt)
{
    /// <summary>
    /// How late the sample taken at <paramref name="takenAt"/> reached this tab: its lag, or, when it had not arrived by
    /// the time the tab was read, at least the time from its taking to then (a lower bound).
    /// </summary>
    public (TimeSpan Lag, bool Arrived) LagOf(long sequence, DateTimeOffset takenAt) =>
        State.Arrivals.FirstOrDefault(a => a.Sequence == sequence) is { } arrival ? (arrival.Lag, true) : (ReadAt - takenAt, false);
}

/// <summary>The page's figures, panels and measurements, as its script reads them.</summary>
internal sealed record PageState(
    double Samples,
    double LatestSample,
    double PeakThreads,
    double StarvedSeconds,
    double PixelRatio,
    string? Status,
    string? Served,
    string? ServedText,
    string? LoadState,
    string? LoadStatus,
    bool LoadResultShown,
    IReadOnlyDictionary<string, string> LoadFields,
    double Scenarios,
    bool Wired,
    IReadOnlyDictionary<string, PageInput> LoadForm,
    double StreamOpenedAt,
    IReadOnlyList<PageArrival> Arrivals,
    IReadOnlyList<PageExportEntry> Exports,
    PageStacks Stacks,
    IReadOnlyList<CanvasSize> Canvases);

/// <summary>A part of the page, from its top, in CSS pixels.</summary>
internal sealed record PageSize(double Width, double Height);

/// <summary>A number input of the load form as the page set it: its value and its maximum, as text.</summary>
internal sealed record PageInput(string Value, string Max);

/// <summary>The stack panel: which capture it shows (its trigger and when it was asked for, as the API gave them) and its sites' lines.</summary>
internal sealed record PageStacks(string? Trigger, string? RequestedAt, IReadOnlyList<string> Lines);

/// <summary>One sample's arrival as the page noted it (Unix milliseconds); live: taken after the page's stream opened.</summary>
internal sealed record PageArrival(long Sequence, long TakenAt, long ReceivedAt, bool Live)
{
    public TimeSpan Lag => TimeSpan.FromMilliseconds(ReceivedAt - TakenAt);
}

/// <summary>A chart's canvas: its backing store in device pixels and its size on the page in CSS pixels.</summary>
internal sealed record CanvasSize(string Id, int Width, int Height, double CssWidth, double CssHeight);

/// <summary>An export as the page recorded it.</summary>
internal sealed record PageExportEntry(string Name, int Width, int Height, long Bytes);

/// <summary>An export and the file the browser saved.</summary>
internal sealed record PageExport(PageExportEntry Entry, byte[] Bytes);

/// <summary>
/// The page reloaded mid-starvation: when, how many samples it had drawn before, how long until it had drawn as many again
/// (the history) and until it had drawn a sample taken after the reload (live again), and when its new stream opened.
/// </summary>
internal sealed record PageReload(DateTimeOffset At, double SamplesBefore, TimeSpan? HistoryBackAfter, TimeSpan? LiveAgainAfter, double SamplesAfter, DateTimeOffset StreamOpenedAt);
