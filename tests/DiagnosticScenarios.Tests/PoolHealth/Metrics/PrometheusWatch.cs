using System.Globalization;
using System.Text;
using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// A real Prometheus watching a run: started ahead of the run, scraping the app's live page (<c>/metrics</c>) every second
/// and evaluating the shipped alert every second; stopped after the load, handing back the alert's state history from the
/// <c>ALERTS</c> series Prometheus itself recorded, with the alert's inputs over the run for the failure message.
/// </summary>
/// <remarks>
/// Prometheus hands the targets it discovers to its scrapers only every five seconds, the first time five seconds after
/// it starts, so it is started early, on the port the run's live page will bind: it scrapes a closed port (a refused
/// connection a second, next to no CPU) until the server is up, and its first scrape of the server follows within a second.
/// </remarks>
internal sealed class PrometheusWatch : IAsyncDisposable
{
    /// <summary>The interval the shipped rules are written for, and the test's scrape and evaluation interval.</summary>
    public static readonly TimeSpan Interval = PrometheusRuleDurations.Shipped.ScrapeInterval;

    private static readonly TimeSpan FirstScrapePatience = TimeSpan.FromSeconds(20);

    private readonly PrometheusServer _prometheus;
    private DateTimeOffset? _watchingFrom;

    private PrometheusWatch(PrometheusServer prometheus, Uri target)
    {
        _prometheus = prometheus;
        Target = target;
    }

    /// <summary>The live page it scrapes.</summary>
    public Uri Target { get; }

    /// <summary>Starts Prometheus scraping the live page at <paramref name="livePage"/>, which a server may bind later, and returns once it is ready.</summary>
    public static async Task<PrometheusWatch> StartAsync(Uri livePage) =>
        new(await PrometheusServer.StartAsync(livePage, Interval), livePage);

    /// <summary>Returns once Prometheus holds the alert's inputs from the live page's server, now up; the history counts from the call.</summary>
    public async Task WatchAsync()
    {
        _watchingFrom = DateTimeOffset.UtcNow;
        var (held, _) = await Poll.UntilAsync(
            () => _prometheus.QueryAsync($"{StarvationRulePrometheus.QueueLength} and {StarvationRulePrometheus.ThreadCount}"), series => series.GetArrayLength() > 0,
            FirstScrapePatience, interval: Interval / 4);
        if (!held)
        {
            throw new TimeoutException($"Prometheus held no series of {Target}metrics {FirstScrapePatience.TotalSeconds:0} s after the server was up:\n{_prometheus.Output}");
        }
    }

    /// <summary>Reads the alert's history and the inputs since the watch started, then stops Prometheus.</summary>
    public async Task<AlertHistory> StopAsync()
    {
        var from = _watchingFrom ?? throw new InvalidOperationException("Prometheus was stopped before it watched the server.");
        // The evaluation that follows the last scrape: every rule group evaluated after this call.
        var stopping = DateTimeOffset.UtcNow;
        var (evaluated, groups) = await Poll.UntilAsync(
            () => _prometheus.RuleGroupsAsync(),
            groups => groups.GetArrayLength() > 0 && groups.EnumerateArray().All(g => g.GetProperty("lastEvaluation").GetDateTimeOffset() >= stopping),
            FirstScrapePatience, interval: Interval / 4);
        if (!evaluated)
        {
            throw new TimeoutException($"Prometheus evaluated no rule group after {stopping:O} within {FirstScrapePatience.TotalSeconds:0} s: {groups}\n{_prometheus.Output}");
        }

        var end = DateTimeOffset.UtcNow;
        var states = new List<AlertState>();
        foreach (var series in (await _prometheus.QueryRangeAsync($"ALERTS{{alertname=\"{StarvationRulePrometheus.AlertName}\"}}", from, end)).EnumerateArray())
        {
            var state = series.GetProperty("metric").GetProperty("alertstate").GetString()!;
            states.AddRange(series.GetProperty("values").EnumerateArray().Select(v => new AlertState(At(v), state)));
        }

        var inputs = new StringBuilder();
        foreach (var (label, promql) in new[]
        {
            ("queue", StarvationRulePrometheus.QueueLength),
            ("threads", StarvationRulePrometheus.ThreadCount),
            ("queued s of work", StarvationRulePrometheus.QueuedSecondsOfWork),
            ("CPU %", StarvationRulePrometheus.CpuPercent),
        })
        {
            var values = (await _prometheus.QueryRangeAsync(promql, from, end)).EnumerateArray().SelectMany(s => s.GetProperty("values").EnumerateArray())
                .Select(v => double.Parse(v[1].GetString()!, CultureInfo.InvariantCulture).ToString("0.#", CultureInfo.InvariantCulture));
            inputs.Append(label).Append(": ").AppendJoin(' ', values).Append('\n');
        }

        return new AlertHistory(from, [.. states.OrderBy(s => s.At)], inputs.ToString(), await ScrapesAsync(from, end));
    }

    /// <summary>
    /// Every scrape of the live page from <paramref name="from"/> to <paramref name="end"/>, as Prometheus stamped it: the
    /// raw samples of its own <c>up</c> and <c>scrape_duration_seconds</c> and of the pool's queue length, which the
    /// scrape carried (a range selector in an instant query answers the samples themselves, not a step's lookback).
    /// </summary>
    private async Task<IReadOnlyList<Scrape>> ScrapesAsync(DateTimeOffset from, DateTimeOffset end)
    {
        var range = string.Create(CultureInfo.InvariantCulture, $"[{Math.Ceiling((end - from).TotalSeconds) + 1:0}s]");
        async Task<Dictionary<long, double>> SamplesAsync(string metric) =>
            (await _prometheus.QueryAsync(metric + range)).EnumerateArray().SelectMany(s => s.GetProperty("values").EnumerateArray())
                .ToDictionary(v => (long)(v[0].GetDouble() * 1000), v => double.Parse(v[1].GetString()!, CultureInfo.InvariantCulture));

        var up = await SamplesAsync("up");
        var took = await SamplesAsync("scrape_duration_seconds");
        var queue = await SamplesAsync(StarvationRulePrometheus.QueueLength);
        return
        [
            .. up.Where(u => u.Key >= from.ToUnixTimeMilliseconds()).OrderBy(u => u.Key).Select(u => new Scrape(
                DateTimeOffset.FromUnixTimeMilliseconds(u.Key),
                u.Value == 1,
                took.TryGetValue(u.Key, out var seconds) ? TimeSpan.FromSeconds(seconds) : null,
                queue.TryGetValue(u.Key, out var length) ? (long)length : null)),
        ];
    }

    public ValueTask DisposeAsync() => _prometheus.DisposeAsync();

    private static DateTimeOffset At(JsonElement point) => DateTimeOffset.FromUnixTimeMilliseconds((long)(point[0].GetDouble() * 1000));
}

/// <summary>The alert as Prometheus recorded it: every evaluation at which it was pending or firing, oldest first.</summary>
/// <param name="WatchStartedAt">When Prometheus started watching.</param>
/// <param name="States">Each second the alert was pending or firing; empty when it never left inactive.</param>
/// <param name="Inputs">The alert's inputs, one per second, for a failure message.</param>
/// <param name="Scrapes">Each scrape of the live page since the watch started, oldest first.</param>
internal sealed record AlertHistory(DateTimeOffset WatchStartedAt, IReadOnlyList<AlertState> States, string Inputs, IReadOnlyList<Scrape> Scrapes)
{
    public DateTimeOffset? FirstFiring => States.FirstOrDefault(s => s.State == "firing")?.At;

    public override string ToString() =>
        $"alert {(States.Count == 0 ? "never left inactive" : string.Join(", ", States.Select(s => $"{s.State} {s.At:HH:mm:ss}")))}\n{Inputs}";
}

/// <summary>The alert's state at one evaluation.</summary>
internal sealed record AlertState(DateTimeOffset At, string State);

/// <summary>One scrape, as Prometheus recorded it.</summary>
/// <param name="At">When Prometheus scraped.</param>
/// <param name="Up">Whether the scrape answered, within the scrape timeout, with series Prometheus could read.</param>
/// <param name="Took">How long the scrape took; null when Prometheus recorded no duration for it.</param>
/// <param name="QueueLength">The pool's queue length the scrape carried; null when the scrape carried none.</param>
internal sealed record Scrape(DateTimeOffset At, bool Up, TimeSpan? Took, long? QueueLength);
