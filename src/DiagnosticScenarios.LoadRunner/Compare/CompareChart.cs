using System.Globalization;
using System.Text;
using DiagnosticScenarios.Common.Catalogue;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>The SVG chart of a <see cref="ComparisonResult"/>, written by hand: two line panels need no charting library.</summary>
public static class CompareChart
{
    // BAD scenarios take warm and dark colours. A GOOD scenario that is one BAD scenario's twin (the blocking family's
    // pairs) takes its colour, dashed, so each pair reads as one; a GOOD scenario all the BAD ones are measured against
    // (the mock and SQL families' async shape) is green, so the odd one out shows at a glance.
    private const string GoodColor = "#2ca02c";
    private const string Dashed = "6 4";
    private static readonly string[] BadPalette = ["#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#1f77b4"];

    /// <summary>Two panels sharing a time axis: average latency of the answers finished in each second, and the server's thread count.</summary>
    public static string Render(ComparisonResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        const int width = 900, panelHeight = 260, left = 70, right = 190, top = 64, gap = 60;
        var plotWidth = width - left - right;
        var height = top + (2 * panelHeight) + gap + 50;
        var seconds = Math.Max(1, result.Results.Max(r => Math.Max(r.Load.Timeline.Count, (int)Math.Ceiling(r.Threads.Count == 0 ? 0 : r.Threads[^1].Seconds))));
        var maxLatency = NiceCeiling(result.Results.SelectMany(r => r.Load.Timeline).Select(p => p.AverageMs).DefaultIfEmpty(1).Max());
        var maxThreads = NiceCeiling(result.Results.SelectMany(r => r.Threads).Select(t => (double)t.Threads).DefaultIfEmpty(1).Max());

        var (colors, dashes) = Colors([.. result.Results.Select(r => (r.Scenario, r.Verdict, r.Twin))]);
        var svg = new StringBuilder();
        svg.AppendLine(CultureInfo.InvariantCulture, $"""<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">""");
        svg.AppendLine(CultureInfo.InvariantCulture, $"""<rect width="{width}" height="{height}" fill="white"/>""");
        svg.AppendLine(CultureInfo.InvariantCulture,
            $"""<text x="{left}" y="22" font-size="15" font-weight="bold">{Escape($"{result.Family}: {result.Connections} connections, {(result.DelayMs is { } ms ? $"{ms} ms query" : "default queries")}, {result.ProcessorCount} CPUs" + (result.MinWorkerThreads is { } m ? $", min threads {m}" : string.Empty))}</text>""");

        Panel(svg, "average latency (ms)", top, maxLatency, result.Results.Select(r => r.Load.Timeline.Where(p => p.Completed > 0).Select(p => (p.Second + 0.5, p.AverageMs)).ToList()).ToList());
        Panel(svg, "server threads", top + panelHeight + gap, maxThreads, result.Results.Select(r => r.Threads.Select(t => (t.Seconds, (double)t.Threads)).ToList()).ToList());

        svg.AppendLine(CultureInfo.InvariantCulture, $"""<text x="{left + (plotWidth / 2)}" y="{height - 12}" text-anchor="middle">seconds since the load started</text>""");
        for (var i = 0; i < result.Results.Count; i++)
        {
            var y = top + 10 + (i * 20);
            var color = colors[i];
            svg.AppendLine(CultureInfo.InvariantCulture, $"""<line x1="{width - right + 15}" y1="{y}" x2="{width - right + 40}" y2="{y}" stroke="{color}" stroke-width="3"{Dash(dashes[i])}/>""");
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
                s.AppendLine(CultureInfo.InvariantCulture, $"""<polyline fill="none" stroke="{colors[i]}" stroke-width="2"{Dash(dashes[i])} points="{points}"/>""");
            }
        }
    }

    /// <summary>
    /// Each scenario's colour, in the order given, and whether its line is dashed: a GOOD scenario that is the twin of one
    /// BAD scenario is drawn in that one's colour, dashed.
    /// </summary>
    public static (string[] Colors, bool[] Dashed) Colors(IReadOnlyList<(string Name, ScenarioVerdict Verdict, string? Twin)> scenarios)
    {
        ArgumentNullException.ThrowIfNull(scenarios);
        var bad = 0;
        var colors = scenarios.Select(s => s.Verdict == ScenarioVerdict.Good ? GoodColor : BadPalette[bad++ % BadPalette.Length]).ToArray();
        var dashed = new bool[colors.Length];
        for (var i = 0; i < colors.Length; i++)
        {
            var good = scenarios[i];
            var twinOf = Enumerable.Range(0, colors.Length).Where(b => scenarios[b].Verdict == ScenarioVerdict.Bad && scenarios[b].Twin == good.Name).ToList();
            if (good.Verdict == ScenarioVerdict.Good && twinOf is [var only])
            {
                (colors[i], dashed[i]) = (colors[only], true);
            }
        }

        return (colors, dashed);
    }

    private static string Dash(bool dashed) => dashed ? $" stroke-dasharray=\"{Dashed}\"" : string.Empty;

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
