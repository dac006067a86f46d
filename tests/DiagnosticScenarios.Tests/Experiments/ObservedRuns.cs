using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using DiagnosticScenarios.Tests.PoolHealth.Metrics;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// The Load collection's shared observed runs. Each scenario runs at most once per test run, when a test first asks for it:
/// a fresh server (two processors, a cold pool), its live page found as data, every observer attached before the load,
/// the load started from the page's own Start load button (125 connections, from the app's runner child), and every
/// record collected before the server goes. Test classes then assert each on their slice of the same runs: the suite pays
/// for each starvation once.
/// </summary>
public sealed class ObservedRuns : IAsyncLifetime
{
    // Start, attach, a load of a dozen seconds and its drain, and the stop, with room for a loaded machine.
    private static readonly TimeSpan RunTimeout = TimeSpan.FromMinutes(3);
    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(10);

    // A taskwait run drains in seconds; a run drained to its end could take the page's request timeout (LoadRunLauncher.RequestTimeout) after its duration.
    private static readonly TimeSpan DrainPatience = TimeSpan.FromSeconds(45);

    private readonly Dictionary<RunPlan, Task<ObservedRun>> _runs = [];

    // Each scraped run's Prometheus, started with the collection (PrometheusObserver says why); a run takes its own.
    private readonly Dictionary<RunPlan, PrometheusObserver> _prometheus = [];
    private readonly Lock _lock = new();
    private readonly LazyBrowser _browser = new();

    /// <summary>The plan's run: observed now if no test has asked for it yet, else the same run again.</summary>
    internal Task<ObservedRun> RunAsync(RunPlan plan)
    {
        Task<ObservedRun> run;
        lock (_lock)
        {
            if (!_runs.TryGetValue(plan, out run!))
            {
                run = ObserveAsync(plan);
                _runs[plan] = run;
            }
        }

        return run.TimeoutAfter(RunTimeout);
    }

    /// <summary>The browser the runs drive, for a page test of its own; started on first use.</summary>
    internal Task<SharedBrowser> BrowserAsync() => _browser.GetAsync();

    public async Task InitializeAsync()
    {
        if (PrometheusTools.Server is not null)
        {
            foreach (var plan in RunPlan.All.Where(p => p.Scraped))
            {
                _prometheus[plan] = PrometheusObserver.StartAhead();
            }
        }

        // dotnet-trace records two of the runs: its manifest is restored now, not on a fresh machine in the middle of a load.
        await DotnetTools.EnsureRestoredAsync().TimeoutAfter(DotnetTools.RestoreTimeout);
    }

    public async Task DisposeAsync()
    {
        List<PrometheusObserver> unused;
        lock (_lock)
        {
            unused = [.. _prometheus.Values];
            _prometheus.Clear();
        }

        foreach (var prometheus in unused)
        {
            await prometheus.DisposeAsync();
        }

        await _browser.DisposeAsync();
    }

    private async Task<ObservedRun> ObserveAsync(RunPlan plan)
    {
        var clock = Stopwatch.StartNew();
        var timings = new List<string>();
        void Lap(string phase) => timings.Add(string.Create(CultureInfo.InvariantCulture, $"{phase} at {clock.Elapsed.TotalSeconds:0.0} s"));

        // The browser starts beside the first server, never during a load; the run's Prometheus has been scraping the live
        // page's port since the collection started, and the server is given that port.
        var browser = SharedBrowser.Available ? BrowserAsync() : null;
        var environment = new Dictionary<string, string>(LogLine.Environment);
        await using var prometheus = TakePrometheus(plan);
        if (prometheus is not null)
        {
            environment["LivePage__Port"] = prometheus.LivePage.Port.ToString(CultureInfo.InvariantCulture);
        }

        using var otlp = plan.ExportsOtlp ? OtlpObserver.StartBefore(environment) : null;
        await using var server = await HealthApp.StartAsync(environment);
        using var client = new HttpClient { Timeout = RequestTimeout };
        var livePage = await server.LivePageAsync();
        Lap("server up");

        using var stopping = new CancellationTokenSource();
        var context = new RunContext(plan, server, livePage, stopping.Token);
        var failures = new List<string>();
        SharedBrowser? started = null;
        try
        {
            started = browser is null ? null : await browser.TimeoutAfter(TimeSpan.FromSeconds(60));
        }
        catch (Exception e)
        {
            // A browser that would not start fails the page's tests, not the run the others read.
            failures.Add($"The browser did not start: {e}");
        }

        var observers = Observers(plan, started, prometheus, otlp, failures);
        var attached = await Task.WhenAll(observers.Select(o => AttachAsync(o, context)));
        failures.AddRange(attached.Where(a => a.Failure is not null).Select(a => a.Failure!));
        var observations = attached.Where(a => a.Observation is not null).Select(a => (a.Name, Observation: a.Observation!)).ToList();
        Lap($"observers attached ({string.Join("; ", attached.Select(a => string.Create(CultureInfo.InvariantCulture, $"{a.Name} {a.Took.TotalSeconds:0.0} s")))})");

        string startedBy;
        DateTimeOffset startedAt;
        try
        {
            startedBy = observations.Select(o => o.Observation).OfType<ILoadStarter>().FirstOrDefault() is { } starter
                ? await starter.StartLoadAsync(plan).TimeoutAfter(TimeSpan.FromSeconds(30))
                : await PostLoadAsync(client, server, plan);
            startedAt = (await CurrentLoadAsync(client, livePage)).GetProperty("startedAt").GetDateTimeOffset();
            context.LoadHasStarted(startedAt);
        }
        catch (Exception e)
        {
            context.LoadNeverStarted(e);
            await stopping.CancelAsync();
            await Task.WhenAll(observations.Select(o => StopAsync(o.Name, o.Observation)));
            throw;
        }

        Lap("load started");

        if (plan.End == RunEnd.RunnerExits)
        {
            await WaitForTheRunnerAsync(client, livePage, plan);
        }
        else
        {
            // Physics sets this interval: the load's own duration, counted from when the runner started.
            var left = startedAt + TimeSpan.FromSeconds(plan.LoadSeconds) - DateTimeOffset.UtcNow;
            await Task.Delay(left > TimeSpan.Zero ? left : TimeSpan.Zero);
        }

        var stoppedAt = DateTimeOffset.UtcNow;
        Lap("load over");
        await stopping.CancelAsync();
        var stopped = await Task.WhenAll(observations.Select(o => StopAsync(o.Name, o.Observation)));
        failures.AddRange(stopped.OfType<string>());
        var load = await CurrentLoadAsync(client, livePage);
        var log = LogLine.Parse(server.Output);
        Lap("observers stopped");

        // Disposing the server (below) kills the runner with it when the run is still loading.
        return new ObservedRun(plan, startedBy, startedAt, stoppedAt, load, log, [.. stopped.Where(r => r is not string)], failures, string.Join(", ", timings));
    }

    private PrometheusObserver? TakePrometheus(RunPlan plan)
    {
        lock (_lock)
        {
            return _prometheus.Remove(plan, out var prometheus) ? prometheus : null;
        }
    }

    private static List<IRunObserver> Observers(RunPlan plan, SharedBrowser? browser, PrometheusObserver? prometheus, OtlpObserver? otlp, List<string> failures)
    {
        List<IRunObserver> observers =
        [
            new MonitorObserver(),
            new StreamObserver(),
            new StacksObserver(),
        ];
        if (plan.RecordsMetrics)
        {
            observers.Add(new MetricsTraceObserver());
        }

        if (plan.RecordsWaits)
        {
            observers.Add(new WaitsTraceObserver());
        }

        if (plan.Scraped)
        {
            if (prometheus is not null)
            {
                observers.Add(prometheus);
            }
            else
            {
                failures.Add($"Prometheus was not attached: {PrometheusFactAttribute.Install}.");
            }
        }

        if (otlp is not null)
        {
            observers.Add(otlp);
        }

        if (plan.Watched)
        {
            observers.Add(new WatchObserver());
        }

        if (browser is not null)
        {
            observers.Add(new BrowserObserver(browser));
        }
        else if (!SharedBrowser.Available)
        {
            failures.Add($"The browser was not attached: {ChromiumFactAttribute.Install}.");
        }

        return observers;
    }

    private static async Task<(string Name, IObservation? Observation, string? Failure, TimeSpan Took)> AttachAsync(IRunObserver observer, RunContext context)
    {
        var clock = Stopwatch.StartNew();
        try
        {
            return (observer.Name, await observer.AttachAsync(context).TimeoutAfter(TimeSpan.FromSeconds(60)), null, clock.Elapsed);
        }
        catch (Exception e)
        {
            return (observer.Name, null, $"{observer.Name} could not attach: {e}", clock.Elapsed);
        }
    }

    // A record, or the failure as a string.
    private static async Task<object> StopAsync(string name, IObservation observation)
    {
        try
        {
            return await observation.StopAsync().TimeoutAfter(TimeSpan.FromSeconds(60));
        }
        catch (Exception e)
        {
            return $"{name} failed: {e}";
        }
    }

    // What the page's Start load button sends, for a run without a browser.
    private static async Task<string> PostLoadAsync(HttpClient client, ServerProcess server, RunPlan plan)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri(server.BaseAddress,
            $"api/threadpool/load?scenario={plan.Scenario}&connections={RunPlan.Connections}&durationSeconds={plan.LoadSeconds}"));
        request.Headers.Add(ControlGate.HeaderName, "1");
        using var response = await client.SendAsync(request).DefaultTimeout();
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"POST /api/threadpool/load answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
        }

        return "POST /api/threadpool/load (no browser)";
    }

    private static async Task<JsonElement> CurrentLoadAsync(HttpClient client, Uri livePage) =>
        (await client.GetFromJsonAsync<JsonElement>(new Uri(livePage, "api/threadpool/load")).DefaultTimeout()).GetProperty("current");

    // Read from the live page's server, which answers at once while the app's pool is starved.
    private static async Task WaitForTheRunnerAsync(HttpClient client, Uri livePage, RunPlan plan)
    {
        var (ended, run) = await Poll.UntilAsync(
            () => CurrentLoadAsync(client, livePage), r => !r.GetProperty("running").GetBoolean(),
            TimeSpan.FromSeconds(plan.LoadSeconds) + DrainPatience, interval: TimeSpan.FromMilliseconds(250));
        if (!ended)
        {
            throw new TimeoutException($"The {plan} run was still running {DrainPatience.TotalSeconds:0} s after its duration: {run}");
        }
    }
}
