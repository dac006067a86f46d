using System.Globalization;
using System.Text;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>A bombardier-like text summary of one <c>run</c>.</summary>
public static class RunSummary
{
    /// <summary>A bombardier-like summary of one run.</summary>
    public static string Render(LoadReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        var l = report.Latency;
        var text = new StringBuilder();
        var loop = report.Rate is { } rate ? string.Create(CultureInfo.InvariantCulture, $"open loop at {rate:0.##} req/s") : "closed loop";
        text.AppendLine(CultureInfo.InvariantCulture, $"{report.Url} with {report.Connections} connections, {loop}, {report.Elapsed.TotalSeconds:0.00} s");
        text.AppendLine("Statistics        Avg      Stdev        Max");
        text.AppendLine(CultureInfo.InvariantCulture, $"  Reqs/sec   {report.RequestsPerSecond,10:0.00}");
        text.AppendLine(CultureInfo.InvariantCulture, $"  Latency    {Milliseconds.Format(l.Average),10} {Milliseconds.Format(l.StandardDeviation),10} {Milliseconds.Format(l.Max),10}");
        text.AppendLine("  Latency Distribution");
        text.AppendLine(CultureInfo.InvariantCulture, $"     50%  {Milliseconds.Format(l.P50),10}");
        text.AppendLine(CultureInfo.InvariantCulture, $"     90%  {Milliseconds.Format(l.P90),10}");
        text.AppendLine(CultureInfo.InvariantCulture, $"     95%  {Milliseconds.Format(l.P95),10}");
        text.AppendLine(CultureInfo.InvariantCulture, $"     99%  {Milliseconds.Format(l.P99),10}");
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
}
