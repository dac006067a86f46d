using System.Globalization;
using System.Text;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>The table and the Markdown report of a <see cref="ComparisonResult"/>.</summary>
public static class CompareTable
{
    /// <summary>The table as Markdown, which also reads well as plain text in a console.</summary>
    public static string Render(ComparisonResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var text = new StringBuilder();
        text.AppendLine("| scenario | verdict | req/s | avg | p50 | p99 | max | errors | ping p50 | peak threads | threads at end |");
        text.AppendLine("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (var r in result.Results)
        {
            // Requests that timed out or never finished count with the wait they had, marked as a lower bound:
            // the answered ones alone would make a starved server look fast (or show nothing at all).
            var (l, atLeast) = LatencyForTable(r.Load);
            var (ping, pingAtLeast) = LatencyForTable(r.Ping);
            text.AppendLine(CultureInfo.InvariantCulture,
                $"| {r.Scenario} | {r.Verdict.ToString().ToUpperInvariant()} | {r.Load.RequestsPerSecond:0.0} | {atLeast}{Milliseconds.Format(l.Average)} | {atLeast}{Milliseconds.Format(l.P50)} | {atLeast}{Milliseconds.Format(l.P99)} | {atLeast}{Milliseconds.Format(l.Max)} | {r.Load.Failures} | {pingAtLeast}{Milliseconds.Format(ping.P50)} | {r.PeakThreads} | {r.ThreadsAtEnd} |");
        }

        if (result.Results.Any(r => r.Diagnosis is not null))
        {
            text.AppendLine();
            text.Append(RenderDiagnosis(result));
        }

        return text.ToString();
    }

    /// <summary>
    /// What <c>--diagnose</c> saw of each server under its load: the runtime's help (thread-goal adjustments for cooperative
    /// blocking and for starvation), the wait events on pool threads, and the snapshot's top blocking site.
    /// </summary>
    public static string RenderDiagnosis(ComparisonResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var text = new StringBuilder();
        text.AppendLine("| scenario | cooperative-blocking injections | starvation injections | WaitHandleWait on pool threads | top blocking site (snapshot half-way) |");
        text.AppendLine("|---|---:|---:|---:|---|");
        foreach (var r in result.Results.Where(r => r.Diagnosis is not null))
        {
            var (snapshot, waits) = (r.Diagnosis!.Snapshot, r.Diagnosis.Waits);
            var site = snapshot.TopBlockedPoolSite() is { } top ? top.Describe(snapshot.PoolThreadCount).ReplaceLineEndings(" ").Replace("|", "\\|", StringComparison.Ordinal) : "no pool thread parked in a blocking call";
            text.AppendLine(CultureInfo.InvariantCulture,
                $"| {r.Scenario} | {waits.PoolAdjustments.GetValueOrDefault("CooperativeBlocking")} | {waits.PoolAdjustments.GetValueOrDefault("Starvation")} | {waits.PoolWaits} | {site} |");
        }

        return text.ToString();
    }

    public static string Markdown(ComparisonResult result, string chartFile)
    {
        ArgumentNullException.ThrowIfNull(result);
        var text = new StringBuilder();
        var query = result.DelayMs is { } delayMs ? string.Create(CultureInfo.InvariantCulture, $"{delayMs} ms query") : "each scenario's default query";
        text.AppendLine(CultureInfo.InvariantCulture, $"# {result.Family} family, {result.Connections} connections, {result.DurationSeconds:0.#} s, {query}");
        text.AppendLine();
        var pool = result.MinWorkerThreads is { } min
            ? string.Create(CultureInfo.InvariantCulture, $"minimum worker threads {min}{(result.MinWorkerThreadsVia is { } via ? ", " + via : "")}")
            : "default thread pool";
        var think = result.ThinkTimeMs > 0 ? string.Create(CultureInfo.InvariantCulture, $", each client pausing 0–{result.ThinkTimeMs:0} ms between requests") : "";

        // Little's law: each client spends the query plus, on average, half the longest pause per request.
        var limit = result.DelayMs is { } ms
            ? string.Create(CultureInfo.InvariantCulture, $" Physical limit: {result.Connections * 1000.0 / (ms + (result.ThinkTimeMs / 2)):0} req/s at {ms} ms.")
            : " Each scenario ran with its catalogue defaults (`GET /api/scenarios`); its URL is in compare.json.";
        text.AppendLine(CultureInfo.InvariantCulture,
            $"Each scenario on a fresh server (cold pool), `DOTNET_PROCESSOR_COUNT={result.ProcessorCount}`, {pool}{think}.{limit}");
        text.AppendLine();
        text.Append(Render(result));
        text.AppendLine();
        var drain = result.DrainSeconds is { } drainSeconds
            ? string.Create(CultureInfo.InvariantCulture, $" Requests still in flight {drainSeconds:0.##} s after sending stopped were cut off, unfinished, and count in `≥` latencies too.")
            : "";
        text.AppendLine(CultureInfo.InvariantCulture,
            $"`errors` counts non-2xx answers, connection errors and timeouts (a request unanswered after {result.TimeoutSeconds:0.##} s); `≥` marks latencies that count timed-out requests with the time they waited, a lower bound.{drain} `ping p50` is the median latency of ten pings a second sent alongside the load.");
        text.AppendLine();
        text.AppendLine(CultureInfo.InvariantCulture, $"![average latency and server threads per second]({chartFile})");
        text.AppendLine();
        text.AppendLine(CultureInfo.InvariantCulture, $"Measured {result.StartedAt:yyyy-MM-dd HH:mm} UTC on {result.Machine}.");
        text.AppendLine();
        text.AppendLine("```");
        text.AppendLine(result.CommandLine);
        text.AppendLine("```");
        return text.ToString();
    }

    private static (LatencySummary Latency, string Marker) LatencyForTable(LoadReport report) =>
        report.Timeouts + report.Unfinished > 0 ? (report.LatencyAtLeast, "≥ ") : (report.Latency, string.Empty);
}
