using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>The table, the Markdown report, the JSON and the SVG chart of a <see cref="ComparisonResult"/>.</summary>
public static class CompareReportWriter
{
    private static readonly string[] Palette = ["#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#1f77b4"];

    public static JsonSerializerOptions JsonOptions { get; } = new(JsonSerializerDefaults.Web)
    {
        WriteIndented = true,
        Converters = { new JsonStringEnumConverter(JsonNamingPolicy.CamelCase) },
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    };

    /// <summary>Writes <c>compare.md</c>, <c>compare.json</c> and <c>compare.svg</c> into the directory and returns their paths.</summary>
    public static async Task<IReadOnlyList<string>> WriteAsync(ComparisonResult result, string directory, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(result);
        Directory.CreateDirectory(directory);
        var markdown = Path.Combine(directory, "compare.md");
        var json = Path.Combine(directory, "compare.json");
        var svg = Path.Combine(directory, "compare.svg");
        await File.WriteAllTextAsync(markdown, Markdown(result, "compare.svg"), cancellationToken);
        await File.WriteAllTextAsync(json, JsonSerializer.Serialize(result, JsonOptions), cancellationToken);
        await File.WriteAllTextAsync(svg, Svg(result), cancellationToken);
        return [markdown, json, svg];
    }

    /// <summary>The table as Markdown, which also reads well as plain text in a console.</summary>
    public static string Table(ComparisonResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var text = new StringBuilder();
        text.AppendLine("| scenario | verdict | req/s | avg | p50 | p99 | max | errors | ping p50 | peak threads | threads at end |");
        text.AppendLine("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (var r in result.Results)
        {
            var l = r.Load.Latency;
            text.AppendLine(CultureInfo.InvariantCulture,
                $"| {r.Scenario} | {r.Verdict.ToString().ToUpperInvariant()} | {r.Load.RequestsPerSecond:0.0} | {Ms(l.Average)} | {Ms(l.P50)} | {Ms(l.P99)} | {Ms(l.Max)} | {r.Load.Failures} | {Ms(r.Ping.Latency.P50)} | {r.PeakThreads} | {r.ThreadsAtEnd} |");
        }

        return text.ToString();
    }

    public static string Markdown(ComparisonResult result, string chartFile)
    {
        ArgumentNullException.ThrowIfNull(result);
        var text = new StringBuilder();
        text.AppendLine(CultureInfo.InvariantCulture, $"# {result.Family} family, {result.Connections} connections, {result.DurationSeconds:0.#} s, {result.DelayMs} ms query");
        text.AppendLine();
        var pool = result.MinWorkerThreads is { } min
            ? string.Create(CultureInfo.InvariantCulture, $"minimum worker threads forced to {min} (the `SetMinThreads` workaround)")
            : "default thread pool";
        text.AppendLine(CultureInfo.InvariantCulture,
            $"Each scenario on a fresh server (cold pool), `DOTNET_PROCESSOR_COUNT={result.ProcessorCount}`, {pool}. Physical limit: {result.Connections * 1000.0 / result.DelayMs:0} req/s at {result.DelayMs} ms.");
        text.AppendLine();
        text.Append(Table(result));
        text.AppendLine();
        text.AppendLine("`errors` counts non-2xx answers, connection errors and timeouts; `ping p50` is the median latency of ten pings a second sent alongside the load.");
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

    /// <summary>Two panels sharing a time axis: average latency of the answers finished in each second, and the server's thread count.</summary>
    public static string Svg(ComparisonResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        const int width = 900, panelHeight = 260, left = 70, right = 190, top = 40, gap = 60;
        var plotWidth = width - left - right;
        var height = top + (2 * panelHeight) + gap + 50;
        var seconds = Math.Max(1, result.Results.Max(r => Math.Max(r.Load.Timeline.Count, (int)Math.Ceiling(r.Threads.Count == 0 ? 0 : r.Threads[^1].Seconds))));
        var maxLatency = NiceCeiling(result.Results.SelectMany(r => r.Load.Timeline).Select(p => p.AverageMs).DefaultIfEmpty(1).Max());
        var maxThreads = NiceCeiling(result.Results.SelectMany(r => r.Threads).Select(t => (double)t.Threads).DefaultIfEmpty(1).Max());

        var svg = new StringBuilder();
        svg.AppendLine(CultureInfo.InvariantCulture, $"""<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">""");
        svg.AppendLine(CultureInfo.InvariantCulture, $"""<rect width="{width}" height="{height}" fill="white"/>""");
        svg.AppendLine(CultureInfo.InvariantCulture,
            $"""<text x="{left}" y="22" font-size="15" font-weight="bold">{Escape($"{result.Family}: {result.Connections} connections, {result.DelayMs} ms query, {result.ProcessorCount} CPUs" + (result.MinWorkerThreads is { } m ? $", min threads {m}" : string.Empty))}</text>""");

        Panel(svg, "average latency (ms)", top, maxLatency, result.Results.Select(r => r.Load.Timeline.Where(p => p.Completed > 0).Select(p => (p.Second + 0.5, p.AverageMs)).ToList()).ToList());
        Panel(svg, "server threads", top + panelHeight + gap, maxThreads, result.Results.Select(r => r.Threads.Select(t => (t.Seconds, (double)t.Threads)).ToList()).ToList());

        svg.AppendLine(CultureInfo.InvariantCulture, $"""<text x="{left + (plotWidth / 2)}" y="{height - 12}" text-anchor="middle">seconds since the load started</text>""");
        for (var i = 0; i < result.Results.Count; i++)
        {
            var y = top + 10 + (i * 20);
            var color = Palette[i % Palette.Length];
            svg.AppendLine(CultureInfo.InvariantCulture, $"""<line x1="{width - right + 15}" y1="{y}" x2="{width - right + 40}" y2="{y}" stroke="{color}" stroke-width="3"/>""");
            svg.AppendLine(CultureInfo.InvariantCulture, $"""<text x="{width - right + 46}" y="{y + 4}">{Escape(result.Results[i].Scenario)} ({result.Results[i].Verdict.ToString().ToUpperInvariant()})</text>""");
        }

        svg.AppendLine("</svg>");
        return svg.ToString();

        void Panel(StringBuilder s, string title, int y0, double yMax, List<List<(double X, double Y)>> series)
        {
            double X(double sec) => left + (sec / seconds * plotWidth);
            double Y(double v) => y0 + panelHeight - (v / yMax * panelHeight);

            s.AppendLine(CultureInfo.InvariantCulture, $"""<text x="{left}" y="{y0 - 8}" font-weight="bold">{Escape(title)}</text>""");
            s.AppendLine(CultureInfo.InvariantCulture, $"""<rect x="{left}" y="{y0}" width="{plotWidth}" height="{panelHeight}" fill="none" stroke="#999"/>""");
            for (var t = 0; t <= 4; t++)
            {
                var v = yMax * t / 4;
                s.AppendLine(CultureInfo.InvariantCulture, $"""<line x1="{left}" y1="{Y(v):0.#}" x2="{left + plotWidth}" y2="{Y(v):0.#}" stroke="#eee"/>""");
                s.AppendLine(CultureInfo.InvariantCulture, $"""<text x="{left - 6}" y="{Y(v) + 4:0.#}" text-anchor="end">{v:0.##}</text>""");
            }

            var step = Math.Max(1, seconds / 10);
            for (var sec = 0; sec <= seconds; sec += step)
            {
                s.AppendLine(CultureInfo.InvariantCulture, $"""<text x="{X(sec):0.#}" y="{y0 + panelHeight + 16}" text-anchor="middle">{sec}</text>""");
            }

            for (var i = 0; i < series.Count; i++)
            {
                if (series[i].Count == 0)
                {
                    continue;
                }

                var points = string.Join(' ', series[i].Select(p => string.Create(CultureInfo.InvariantCulture, $"{X(p.X):0.#},{Y(p.Y):0.#}")));
                s.AppendLine(CultureInfo.InvariantCulture, $"""<polyline fill="none" stroke="{Palette[i % Palette.Length]}" stroke-width="2" points="{points}"/>""");
            }
        }
    }

    /// <summary>A bombardier-like summary of one run.</summary>
    public static string Summary(LoadReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        var l = report.Latency;
        var text = new StringBuilder();
        var loop = report.Rate is { } rate ? string.Create(CultureInfo.InvariantCulture, $"open loop at {rate:0.##} req/s") : "closed loop";
        text.AppendLine(CultureInfo.InvariantCulture, $"{report.Url} with {report.Connections} connections, {loop}, {report.Elapsed.TotalSeconds:0.00} s");
        text.AppendLine("Statistics        Avg      Stdev        Max");
        text.AppendLine(CultureInfo.InvariantCulture, $"  Reqs/sec   {report.RequestsPerSecond,10:0.00}");
        text.AppendLine(CultureInfo.InvariantCulture, $"  Latency    {Ms(l.Average),10} {Ms(l.StandardDeviation),10} {Ms(l.Max),10}");
        text.AppendLine("  Latency Distribution");
        text.AppendLine(CultureInfo.InvariantCulture, $"     50%  {Ms(l.P50),10}");
        text.AppendLine(CultureInfo.InvariantCulture, $"     90%  {Ms(l.P90),10}");
        text.AppendLine(CultureInfo.InvariantCulture, $"     95%  {Ms(l.P95),10}");
        text.AppendLine(CultureInfo.InvariantCulture, $"     99%  {Ms(l.P99),10}");
        text.AppendLine("  HTTP codes:");
        text.Append("    ");
        text.AppendLine(report.StatusCodes.Count == 0 ? "none" : string.Join(", ", report.StatusCodes.Select(s => string.Create(CultureInfo.InvariantCulture, $"{s.Key} - {s.Value}"))));
        text.AppendLine(CultureInfo.InvariantCulture, $"  sent {report.Sent}, answered {report.Completed}, timeouts {report.Timeouts}, unfinished {report.Unfinished}");
        foreach (var (message, count) in report.Errors)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"  error: {message} - {count}");
        }

        return text.ToString();
    }

    private static string Ms(double ms) => ms >= 1000
        ? string.Create(CultureInfo.InvariantCulture, $"{ms / 1000:0.00}s")
        : string.Create(CultureInfo.InvariantCulture, $"{ms:0.0}ms");

    private static double NiceCeiling(double value)
    {
        if (value <= 0)
        {
            return 1;
        }

        var magnitude = Math.Pow(10, Math.Floor(Math.Log10(value)));
        foreach (var factor in new[] { 1, 2, 2.5, 5, 10 })
        {
            if (factor * magnitude >= value)
            {
                return factor * magnitude;
            }
        }

        return 10 * magnitude;
    }

    private static string Escape(string text) => text.Replace("&", "&amp;", StringComparison.Ordinal).Replace("<", "&lt;", StringComparison.Ordinal).Replace(">", "&gt;", StringComparison.Ordinal);
}
