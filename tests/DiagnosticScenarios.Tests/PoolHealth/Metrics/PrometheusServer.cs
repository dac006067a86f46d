using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;
using System.Text.RegularExpressions;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// Debian's Prometheus on a free loopback port, with a configuration made from the shipped monitoring/prometheus.yml (its
/// target and its intervals substituted, nothing else) and the shipped alert rules beside it, read back through its HTTP
/// API. Its data lives in a folder of its own, deleted with it.
/// </summary>
internal sealed partial class PrometheusServer : IAsyncDisposable
{
    private const string ShippedTarget = "localhost:5002";
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly ChildProcess _process;
    private readonly string _folder;
    private readonly HttpClient _client;

    private PrometheusServer(ChildProcess process, string folder, Uri address)
    {
        _process = process;
        _folder = folder;
        _client = new HttpClient { BaseAddress = address, Timeout = TimeSpan.FromSeconds(10) };
    }

    /// <summary>Its log, for failure messages.</summary>
    public string Output => _process.Output + _process.Error;

    /// <summary>Starts it scraping <paramref name="target"/> (host and port) every <paramref name="interval"/> and returns once it is ready.</summary>
    public static async Task<PrometheusServer> StartAsync(Uri target, TimeSpan interval)
    {
        var folder = Directory.CreateTempSubdirectory("diagnosticscenarios-prometheus-").FullName;
        await File.WriteAllTextAsync(Path.Combine(folder, "prometheus.yml"), ConfigFor(target, interval));
        File.Copy(MonitoringFiles.AlertRules, Path.Combine(folder, Path.GetFileName(MonitoringFiles.AlertRules)));
        var address = new Uri($"http://127.0.0.1:{FreeLoopbackPort.Pick()}/");
        var process = ChildProcess.Start(new ChildProcessStart(PrometheusTools.Server ?? "prometheus",
        [
            $"--config.file={Path.Combine(folder, "prometheus.yml")}",
            $"--storage.tsdb.path={Path.Combine(folder, "data")}",
            $"--web.listen-address={address.Authority}",
        ])
        {
            WorkingDirectory = folder,
            TimeLimit = TimeSpan.FromMinutes(10),
        });
        var server = new PrometheusServer(process, folder, address);
        try
        {
            await server.WaitUntilReadyAsync();
            return server;
        }
        catch
        {
            await server.DisposeAsync();
            throw;
        }
    }

    /// <summary>The shipped configuration with <paramref name="target"/> and <paramref name="interval"/> in place of its own.</summary>
    public static string ConfigFor(Uri target, TimeSpan interval)
    {
        var shipped = File.ReadAllText(MonitoringFiles.ScrapeConfig);
        var seconds = Duration(interval);
        var intervals = Intervals().Count(shipped);
        if (!shipped.Contains($"\"{ShippedTarget}\"", StringComparison.Ordinal) || intervals != 3)
        {
            throw new InvalidOperationException($"{MonitoringFiles.ScrapeConfig} no longer names the target {ShippedTarget} and three intervals; update {nameof(PrometheusServer)}.");
        }

        return Intervals().Replace(shipped.Replace($"\"{ShippedTarget}\"", $"\"{target.Authority}\"", StringComparison.Ordinal), m => $"{m.Groups["key"].Value}: {seconds}");
    }

    /// <summary>An instant query's <c>data.result</c>.</summary>
    public Task<JsonElement> QueryAsync(string promql) =>
        DataAsync($"api/v1/query?query={Uri.EscapeDataString(promql)}", "result");

    /// <summary>A range query's <c>data.result</c>, one point per second.</summary>
    public Task<JsonElement> QueryRangeAsync(string promql, DateTimeOffset start, DateTimeOffset end) =>
        DataAsync(string.Create(CultureInfo.InvariantCulture,
            $"api/v1/query_range?query={Uri.EscapeDataString(promql)}&start={start.ToUnixTimeMilliseconds() / 1000.0}&end={end.ToUnixTimeMilliseconds() / 1000.0}&step=1"), "result");

    /// <summary>The alerts now pending or firing (<c>/api/v1/alerts</c>).</summary>
    public Task<JsonElement> AlertsAsync() => DataAsync("api/v1/alerts", "alerts");

    /// <summary>The rule groups and when each was last evaluated (<c>/api/v1/rules</c>, its <c>data.groups</c>).</summary>
    public Task<JsonElement> RuleGroupsAsync() => DataAsync("api/v1/rules", "groups");

    public async ValueTask DisposeAsync()
    {
        _client.Dispose();
        await _process.DisposeAsync();
        Directory.Delete(_folder, recursive: true);
    }

    private async Task<JsonElement> DataAsync(string path, string property)
    {
        var answer = await _client.GetFromJsonAsync<JsonElement>(new Uri(path, UriKind.Relative)).DefaultTimeout();
        return answer.GetProperty("status").GetString() == "success"
            ? answer.GetProperty("data").GetProperty(property)
            : throw new InvalidOperationException($"Prometheus answered {path} with {answer}");
    }

    private async Task WaitUntilReadyAsync()
    {
        var (ready, _) = await Poll.UntilAsync(IsReadyAsync, ready => ready, StartTimeout, interval: TimeSpan.FromMilliseconds(100));
        if (!ready)
        {
            throw new TimeoutException($"Prometheus was not ready within {StartTimeout.TotalSeconds:0} s:\n{Output}");
        }
    }

    private async Task<bool> IsReadyAsync()
    {
        if (_process.HasExited)
        {
            throw new InvalidOperationException($"Prometheus exited before it was ready:\n{Output}");
        }

        try
        {
            using var ready = await _client.GetAsync(new Uri("-/ready", UriKind.Relative)).DefaultTimeout();
            return ready.IsSuccessStatusCode;
        }
        catch (HttpRequestException)
        {
            return false; // not listening yet
        }
    }

    /// <summary>The shipped scrape configuration's scrape interval, evaluation interval and scrape timeout, as written.</summary>
    public static IReadOnlyList<string> ShippedIntervals() =>
        [.. Intervals().Matches(File.ReadAllText(MonitoringFiles.ScrapeConfig)).Select(m => m.Groups["value"].Value)];

    /// <summary>A duration as Prometheus's configuration writes it (<c>1s</c>, <c>15s</c>).</summary>
    public static string Duration(TimeSpan duration) => string.Create(CultureInfo.InvariantCulture, $"{duration.TotalSeconds:0.###}s");

    [GeneratedRegex(@"(?<key>scrape_interval|evaluation_interval|scrape_timeout): (?<value>\S+)")]
    private static partial Regex Intervals();
}
