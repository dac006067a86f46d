using System.Net;
using System.Net.Http.Json;
using System.Net.Sockets;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Experiments;
using OpenQA.Selenium;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.LivePage;

/// <summary>
/// The live page where it cannot be what it usually is, in the observed runs' browser: served through the app because its
/// own server's port was taken, in a process started without its diagnostic port (<c>DOTNET_EnableDiagnostics=0</c>), so
/// no stack capture can be taken. It says both. Nothing here is loaded or timed but the browser's own holds, seconds long, so
/// the class runs beside the functional tests, with a browser of its own.
/// </summary>
[Trait(TestCategory.Name, TestCategory.Load)]
[StartsEarly("a headless Chromium and four servers of its own: 16–28 s in CI")]
public sealed class LivePageFallbackTests(LazyBrowser browsers, LivePageFallbackTests.Server server, ITestOutputHelper output)
    : IClassFixture<LazyBrowser>, IClassFixture<LivePageFallbackTests.Server>
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    [ChromiumFact]
    public async Task LivePage_SaysItIsServedThroughTheApp_WhenItsOwnServersPortIsTaken()
    {
        var app = await server.StartAsync();
        var browser = await browsers.GetAsync();
        using var client = new HttpClient { BaseAddress = app.BaseAddress, Timeout = Patience };
        var settings = await client.GetFromJsonAsync<JsonElement>(new Uri("api/threadpool/page", UriKind.Relative)).DefaultTimeout();

        var served = await Task.Run(() =>
        {
            browser.Driver.Navigate().GoToUrl(app.BaseAddress);
            SharedBrowser.WaitUntil(() => browser.Read<string?>("document.getElementById('served').dataset.served") != "unknown", Patience, "say where it is served from");
            return (Kind: browser.Read<string>("document.getElementById('served').dataset.served"), Text: browser.Driver.FindElement(By.Id("served")).Text);
        }).TimeoutAfter(Patience + Patience);

        output.WriteLine($"{settings}\n{served.Text}");
        Assert.Equal(JsonValueKind.Null, settings.GetProperty("livePage").ValueKind);
        Assert.Contains(app.Output.Split('\n'), line => line.Contains($"could not listen on port {server.TakenPort}", StringComparison.Ordinal));
        Assert.Equal("through-the-app", served.Kind);
        Assert.Contains("goes dark while the pool starves", served.Text, StringComparison.Ordinal);
        Assert.Contains("LivePage:Port", served.Text, StringComparison.Ordinal);
    }

    [ChromiumFact]
    public async Task LivePage_SaysTheCaptureFailedAndWhy_WhenTheProcessHasNoDiagnosticPort()
    {
        var app = await server.StartAsync();
        var browser = await browsers.GetAsync();

        var shown = await Task.Run(() =>
        {
            browser.Driver.Navigate().GoToUrl(app.BaseAddress);
            SharedBrowser.WaitUntil(() => browser.Driver.FindElement(By.Id("stacks-capture")).Enabled, Patience, "offer its Capture now button");
            browser.Driver.FindElement(By.Id("stacks-capture")).Click();
            SharedBrowser.WaitUntil(() => browser.Driver.FindElement(By.Id("stacks-status")).Text.StartsWith("The capture failed", StringComparison.Ordinal), Patience, "say the capture failed",
                () => $"\"{browser.Driver.FindElement(By.Id("stacks-status")).Text}\"; the button {(browser.Driver.FindElement(By.Id("stacks-capture")).Enabled ? "enabled" : "disabled")}");
            return browser.Driver.FindElement(By.Id("stacks-status")).Text;
        }).TimeoutAfter(Patience + Patience);
        using var client = app.CreateControlClient();
        using var latest = await client.GetAsync(new Uri("api/threadpool/stacks", UriKind.Relative)).DefaultTimeout();
        var problem = await latest.Content.ReadFromJsonAsync<JsonElement>().DefaultTimeout();

        output.WriteLine($"the page: {shown}\nGET /api/threadpool/stacks: {(int)latest.StatusCode} {problem}");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, latest.StatusCode);
        Assert.StartsWith("The capture failed (503): ", shown, StringComparison.Ordinal);
        Assert.Contains(problem.GetProperty("title").GetString()!, shown, StringComparison.Ordinal);
        Assert.Contains(problem.GetProperty("detail").GetString()!, shown, StringComparison.Ordinal);
    }

    // A press before the page knows where the app is would go nowhere (no listener yet) or to the wrong server: the page's
    // question is held back here for two seconds in the browser, and every control waits for its answer.
    [ChromiumFact]
    public async Task LivePage_OffersItsControls_OnlyOnceItKnowsWhereTheAppIs()
    {
        var app = await server.StartAsync();
        var browser = await browsers.GetAsync();
        var holdSettingsBack = OverrideFetch("String(url).endsWith('/api/threadpool/page')",
            "fetched(url, options).then((response) => new Promise((resolve) => setTimeout(() => resolve(response), 2000)))");
        const string enabled = "['export-png', 'stacks-capture', 'load-start', 'load-stop', 'minthreads-apply', 'minthreads-reset'].filter((id) => !document.getElementById(id).disabled).join(' ')";

        var (before, after) = await Task.Run(() => browser.WithScriptBeforeEachPage(holdSettingsBack, () =>
        {
            browser.Driver.Navigate().GoToUrl(app.BaseAddress);
            var before = browser.Read<string>(enabled);
            SharedBrowser.WaitUntil(() => browser.Read<string>(enabled).Split(' ').Length == 6, Patience, "enable its controls", () => browser.Read<string>(enabled));
            return (before, browser.Read<string>(enabled));
        })).TimeoutAfter(Patience + Patience);

        output.WriteLine($"enabled while the page waited for its settings: \"{before}\"; once it had them: \"{after}\"");
        Assert.Equal("", before);
    }

    // The race a poll can lose: the page's first read of the latest capture leaves before "Capture now" is pressed and, held
    // back here for three seconds in the browser (the server answered it at once: no capture yet), arrives after the
    // capture's own answer. A server of its own, so that no capture exists when the page asks.
    [ChromiumFact]
    public async Task LivePage_KeepsTheCapturesAnswer_WhenAPollAskedBeforeItAnswersAfterIt()
    {
        await using var app = await HealthApp.StartAsync(new Dictionary<string, string> { ["DOTNET_EnableDiagnostics"] = "0" });
        var browser = await browsers.GetAsync();
        // Every call the page makes for the capture and every text its status shows, timed, for a failure to print.
        const string holdPollsBack = """
            const fetched = window.fetch.bind(window);
            const started = Date.now();
            window.seen = [];
            const see = (what) => window.seen.push(`${Date.now() - started} ms ${what}`);
            window.fetch = (url, options) => {
              if (!String(url).endsWith('/api/threadpool/stacks')) return fetched(url, options);
              const call = `${options && options.method || 'GET'} ${url}`;
              see(call);
              const answered = fetched(url, options).then((response) => { see(`${call}: ${response.status}`); return response; });
              if (options && options.method === 'POST') return answered;
              window.polls.asked++;
              // Settled: a task after the hand-over, so after the page's own continuations on it (a 404, no body to read).
              return answered.then((response) => new Promise((resolve) => setTimeout(() => {
                see(`${call}: handed to the page`); window.polls.handed++; resolve(response);
                setTimeout(() => { window.polls.settled++; }, 0);
              }, 3000)));
            };
            window.polls = { asked: 0, handed: 0, settled: 0, askedBeforeThePress: null, heldAtThePress: null };
            document.addEventListener('DOMContentLoaded', () => {
              const status = document.getElementById('stacks-status');
              new MutationObserver(() => see(`status: ${status.textContent}`)).observe(status, { childList: true, characterData: true, subtree: true });
              document.getElementById('stacks-capture').addEventListener('click', () => { window.polls.askedBeforeThePress = window.polls.asked; window.polls.heldAtThePress = window.polls.asked - window.polls.handed; see('Capture now pressed'); });
            });
            """;

        var (shown, afterThePoll, polls) = await Task.Run(() => browser.WithScriptBeforeEachPage(holdPollsBack, () =>
        {
            browser.Driver.Navigate().GoToUrl(app.BaseAddress);
            SharedBrowser.WaitUntil(() => browser.Driver.FindElement(By.Id("stacks-capture")).Enabled, Patience, "offer its Capture now button");
            // The button's own click, not a pointer at its place, which can miss both the page's handler and the script's
            // listener above while the page moves as it fills in; this test is about the poll.
            browser.Driver.ExecuteScript("document.getElementById('stacks-capture').click();");
            SharedBrowser.WaitUntil(() => browser.Driver.FindElement(By.Id("stacks-status")).Text.StartsWith("The capture failed", StringComparison.Ordinal), Patience, "say the capture failed",
                () => $"\"{browser.Driver.FindElement(By.Id("stacks-status")).Text}\", after:\n{string.Join('\n', browser.Read<string[]>("window.seen"))}");
            var shown = browser.Driver.FindElement(By.Id("stacks-status")).Text;
            // Every poll asked before the press handed to the page, three seconds after the server answered it, and the page
            // done with it: the older answers have all arrived, after the capture's own.
            SharedBrowser.WaitUntil(() => browser.Read<bool>("window.polls.askedBeforeThePress !== null && window.polls.settled >= window.polls.askedBeforeThePress"), Patience,
                "receive every poll asked before the press", () => string.Join('\n', browser.Read<string[]>("window.seen")));
            var polls = browser.Read<JsonElement>("window.polls");
            return (shown, browser.Driver.FindElement(By.Id("stacks-status")).Text, polls);
        })).TimeoutAfter(Patience + Patience);

        output.WriteLine($"after the capture: {shown}\nafter the older polls' answers ({polls}): {afterThePoll}");
        // A race the page was not put in proves nothing: a poll must have been on its way when the button was pressed.
        Assert.True(polls.GetProperty("heldAtThePress").GetInt32() > 0, $"no poll was on its way when the button was pressed: {polls}");
        Assert.Equal(shown, afterThePoll);
    }

    // A control whose request gets no answer at all (the app stopped or restarting, a refused preflight): the page says so
    // where the answer would show; the click had done nothing visible. The browser's fetch of the control is made to fail
    // here, as a refused connection fails it.
    [ChromiumFact]
    public async Task LivePage_SaysAControlGotNoAnswer_WhenItsRequestFails()
    {
        var app = await server.StartAsync();
        var browser = await browsers.GetAsync();
        var failTheControl = OverrideFetch("String(url).includes('/api/threadpool/minthreads')", "Promise.reject(new TypeError('Failed to fetch'))");

        var shown = await Task.Run(() => browser.WithScriptBeforeEachPage(failTheControl, () =>
        {
            browser.Driver.Navigate().GoToUrl(app.BaseAddress);
            SharedBrowser.WaitUntil(() => browser.Driver.FindElement(By.Id("minthreads-apply")).Enabled, Patience, "offer its Apply button");
            browser.Driver.ExecuteScript("document.getElementById('minthreads-apply').click();");
            SharedBrowser.WaitUntil(() => browser.Driver.FindElement(By.Id("minthreads-status")).Text.Length > 0, Patience, "say what Apply got");
            return browser.Driver.FindElement(By.Id("minthreads-status")).Text;
        })).TimeoutAfter(Patience + Patience);

        output.WriteLine(shown);
        Assert.StartsWith($"No answer from the app at {app.BaseAddress.GetLeftPart(UriPartial.Authority)}: ", shown, StringComparison.Ordinal);
        Assert.EndsWith("Failed to fetch", shown, StringComparison.Ordinal);
    }

    /// <summary>
    /// The app restarted while its page stayed open: the browser's stream reconnects to the same port with the first run's
    /// last event id, the server sends the new run's samples from its first, and the page shows them rather than drop each as
    /// one it already has. Two servers of its own, one after the other, on one port for the live page's server. The page
    /// tells a new run by the run id each sample carries, whichever run is the longer
    /// (<see cref="LivePage_StartsANewRun_OnASampleOfAnotherRun_WhateverItsSequence"/>).
    /// </summary>
    [ChromiumFact]
    public async Task LivePage_ShowsTheNewRun_WhenTheAppRestartsWhileItIsOpen()
    {
        var port = FreeLoopbackPort.Pick();
        var environment = new Dictionary<string, string> { ["LivePage__Port"] = port.ToString(System.Globalization.CultureInfo.InvariantCulture) };
        const string Shown = "({ runs: Number(document.body.dataset.runs || 0), samples: Number(document.body.dataset.samples || 0), latest: Number(document.body.dataset.latestSample || 0) })";
        var browser = await browsers.GetAsync();

        JsonElement first;
        await using (var app = await HealthApp.StartAsync(environment))
        {
            first = await Task.Run(() =>
            {
                browser.Driver.Navigate().GoToUrl(new Uri($"http://127.0.0.1:{port}/"));
                SharedBrowser.WaitUntil(() => browser.Read<JsonElement>(Shown).GetProperty("samples").GetDouble() >= 6, Patience, "show six samples of the first run", () => browser.Read<JsonElement>(Shown).ToString());
                return browser.Read<JsonElement>(Shown);
            }).TimeoutAfter(Patience + Patience);
        }

        await using var restarted = await HealthApp.StartAsync(environment);
        var second = await Task.Run(() =>
        {
            SharedBrowser.WaitUntil(() => browser.Read<JsonElement>(Shown).GetProperty("runs").GetDouble() == 2, Patience, "show the second run", () => browser.Read<JsonElement>(Shown).ToString());
            return browser.Read<JsonElement>(Shown);
        }).TimeoutAfter(Patience + Patience);

        output.WriteLine($"first run: {first}\nafter the restart: {second}");
        Assert.Equal(1, first.GetProperty("runs").GetDouble());
        Assert.True(second.GetProperty("latest").GetDouble() > first.GetProperty("latest").GetDouble(), $"{first} then {second}");
        Assert.True(second.GetProperty("samples").GetDouble() < first.GetProperty("samples").GetDouble() + 1, $"the first run's samples were kept: {first} then {second}");
    }

    // The page's own rule for a restart, fed by hand (HandFedAsync): a run of three seconds, then samples of another run
    // whose sequences follow on from the first run's (as a backlog of a run older than five minutes would: the server sends
    // a new run's last five minutes). The page starts a new run on the run id alone, not on the sequence, and drops a
    // sample of the new run it already has.
    [ChromiumFact]
    public async Task LivePage_StartsANewRun_OnASampleOfAnotherRun_WhateverItsSequence()
    {
        var shown = await HandFedAsync("({ runs: Number(document.body.dataset.runs), samples: Number(document.body.dataset.samples) })",
            [(1, 1), (1, 2), (1, 3), (2, 4), (2, 4), (2, 5)]);

        Assert.Equal(
            [
                "run 1, sequence 1: {\"runs\":1,\"samples\":1}",
                "run 1, sequence 2: {\"runs\":1,\"samples\":2}",
                "run 1, sequence 3: {\"runs\":1,\"samples\":3}",
                "run 2, sequence 4: {\"runs\":2,\"samples\":1}",
                "run 2, sequence 4: {\"runs\":2,\"samples\":1}",
                "run 2, sequence 5: {\"runs\":2,\"samples\":2}",
            ],
            shown);
    }

    // Samples a reader missed for good (it reconnected after the app's five minutes of history had moved on): each chart's
    // line stops at the last sample before the gap and starts again at the first after it, one piece of line per series
    // before the gap and two after (the threads chart draws two series, the queue length one).
    [ChromiumFact]
    public async Task LivePage_BreaksItsLines_WhereSamplesAreMissing()
    {
        var shown = await HandFedAsync("({ threads: window.livePage.pieces['chart-threads'], queue: window.livePage.pieces['chart-queue-length'] })",
            [(1, 1), (1, 2), (1, 3), (1, 8), (1, 9)]);

        Assert.Equal(
            [
                "run 1, sequence 1: {\"threads\":2,\"queue\":1}",
                "run 1, sequence 2: {\"threads\":2,\"queue\":1}",
                "run 1, sequence 3: {\"threads\":2,\"queue\":1}",
                "run 1, sequence 8: {\"threads\":4,\"queue\":2}",
                "run 1, sequence 9: {\"threads\":4,\"queue\":2}",
            ],
            shown);
    }

    // A presenter's page after a tour of the catalogue: twenty endpoints with requests in the charts' five minutes. The
    // legend tells each line apart (the palette's nine colours solid, then dashed, then dotted), and the slide's key names
    // as many as fit in its cell and counts the rest, inside the cell.
    [ChromiumFact]
    public async Task LivePage_TellsTwentyEndpointsApart_AndItsSlideKeyNamesWhatFitsAndCountsTheRest()
    {
        const int Endpoints = 20;
        var styles = await HandFedAsync("[...document.querySelectorAll('#legend i')].map((i) => i.style.background)", [(1, 1), (1, 2)], Endpoints);
        var legend = JsonSerializer.Deserialize<string[]>(styles[^1][(styles[^1].IndexOf(": ", StringComparison.Ordinal) + 2)..])!;
        Assert.Equal(Endpoints, legend.Length);
        Assert.Equal(Endpoints, legend.Distinct().Count());

        var browser = await browsers.GetAsync();
        var key = await Task.Run(() =>
        {
            browser.Driver.ExecuteScript("document.getElementById('export-png').click();");
            SharedBrowser.WaitUntil(() => browser.Read<int>("window.livePage.exports.length") == 1, Patience, "save its slide");
            return browser.Read<JsonElement>("window.livePage.exports[0].key ?? 'no key reported'");
        }).TimeoutAfter(Patience + Patience);

        output.WriteLine($"the slide's key: {key}");
        Assert.Equal(JsonValueKind.Object, key.ValueKind);
        Assert.Equal(Endpoints, key.GetProperty("named").GetInt32() + key.GetProperty("counted").GetInt32());
        Assert.InRange(key.GetProperty("named").GetInt32(), 9, Endpoints - 1);
        Assert.True(key.GetProperty("bottom").GetDouble() <= key.GetProperty("cellBottom").GetDouble(), $"the key runs out of its cell: {key}");
    }

    /// <summary>
    /// The page fed by hand: the browser's EventSource is replaced, before the page's script runs, by one that connects
    /// nowhere and hands the page the samples given here (run, sequence), copies of a real one of the app's, each taken a
    /// second after the one before in sequence. After each, what <paramref name="shown"/> reads once the page has drawn.
    /// </summary>
    private async Task<List<string>> HandFedAsync(string shown, (int Run, int Sequence)[] samples, int endpoints = 0)
    {
        var app = await server.StartAsync();
        var browser = await browsers.GetAsync();
        using var client = new HttpClient { BaseAddress = app.BaseAddress, Timeout = Patience };
        using var response = await client.GetAsync(new Uri("api/threadpool/stream?after=0", UriKind.Relative), HttpCompletionOption.ResponseHeadersRead).DefaultTimeout();
        using var reader = new StreamReader(await response.Content.ReadAsStreamAsync().DefaultTimeout());
        string? line;
        while ((line = await reader.ReadLineAsync().DefaultTimeout()) is not null && !line.StartsWith("data: ", StringComparison.Ordinal))
        {
        }

        const string HandFed = """
            window.EventSource = class extends EventTarget {
              constructor(url) { super(); window.handFed = this; setTimeout(() => this.dispatchEvent(new Event('open')), 0); }
              close() {}
            };
            // Given a number of endpoints, the sample reports that many, each with a request a second.
            window.feed = (template, runId, sequence, endpoints) => window.handFed.dispatchEvent(new MessageEvent('sample', {
              data: JSON.stringify({
                ...template, runId, sequence, unixTimeMs: template.unixTimeMs + sequence * 1000,
                endpoints: endpoints ? Array.from({ length: endpoints }, (_, i) => ({ route: `GET /api/endpoint-${i + 1}`, inFlight: 0, holdingThread: 0, completed: 1, latencyAvgMs: 1, latencyMaxMs: 1, holdAvgMs: 0, holdMaxMs: 0 })) : template.endpoints,
              }) }));
            """;
        var template = line!["data: ".Length..];

        var steps = await Task.Run(() => browser.WithScriptBeforeEachPage(HandFed, () =>
        {
            browser.Driver.Navigate().GoToUrl(app.BaseAddress);
            SharedBrowser.WaitUntil(() => browser.Read<bool>("window.handFed !== undefined"), Patience, "open its stream");
            var steps = new List<string>();
            foreach (var (run, sequence) in samples)
            {
                browser.Driver.ExecuteScript($"window.feed({template}, {run}, {sequence}, {endpoints});");
                // The page draws at the next frame; the driver waits for the promise of the one after it.
                browser.Driver.ExecuteScript("return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))));");
                steps.Add($"run {run}, sequence {sequence}: {browser.Read<JsonElement>(shown)}");
            }

            return steps;
        })).TimeoutAfter(Patience + Patience);

        output.WriteLine(string.Join('\n', steps));
        return steps;
    }

    // A script run before the page's own: its fetches of the URLs `matches` picks get `instead`, the others go out as
    // usual (`fetched` is the browser's own fetch).
    private static string OverrideFetch(string matches, string instead) => $$"""
        const fetched = window.fetch.bind(window);
        window.fetch = (url, options) => {{matches}} ? {{instead}} : fetched(url, options);
        """;

    /// <summary>
    /// One server for the class: the live page's port held by a listener of the test's own, and the runtime's diagnostic
    /// port switched off. Started on first use, so a run that skips the page tests starts nothing.
    /// </summary>
    public sealed class Server : IAsyncLifetime, IDisposable
    {
        private readonly Lock _lock = new();
        private readonly TcpListener _taken = new(IPAddress.Loopback, 0);
        private Task<ServerProcess>? _started;

        public int TakenPort => ((IPEndPoint)_taken.LocalEndpoint).Port;

        internal Task<ServerProcess> StartAsync()
        {
            lock (_lock)
            {
                return _started ??= StartServerAsync();
            }
        }

        public Task InitializeAsync() => Task.CompletedTask;

        public async Task DisposeAsync()
        {
            Task<ServerProcess>? started;
            lock (_lock)
            {
                started = _started;
            }

            if (started is not null)
            {
                await ((Task)started).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                if (started.IsCompletedSuccessfully)
                {
                    await (await started).DisposeAsync();
                }
            }

            Dispose();
        }

        public void Dispose() => _taken.Dispose();

        private Task<ServerProcess> StartServerAsync()
        {
            _taken.Start();
            return HealthApp.StartAsync(new Dictionary<string, string>
            {
                ["LivePage__Port"] = TakenPort.ToString(System.Globalization.CultureInfo.InvariantCulture),
                ["DOTNET_EnableDiagnostics"] = "0",
            });
        }
    }
}
