using System.Globalization;
using System.Text;
using OpenTelemetry;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;

namespace DiagnosticScenarios.PoolHealth.Metrics;

/// <summary>
/// The Prometheus text format (0.0.4) of one collection, named as OpenTelemetry's own Prometheus exporter names it by
/// default (the specification's Prometheus compatibility rules: dots to underscores, the unit as a suffix, <c>_total</c>
/// on a counter, an <c>otel_scope_name</c> label, <c>target_info</c> for the resource), so the shipped alert rules read
/// the same series whichever exporter a reader scrapes.
/// </summary>
internal static class PrometheusText
{
    public const string ContentType = "text/plain; version=0.0.4; charset=utf-8";

    // The specification's unit words for the units this app's meters and the runtime's use; an annotation ({thread}) adds none.
    private static readonly Dictionary<string, string> UnitWords = new(StringComparer.Ordinal)
    {
        ["s"] = "seconds",
        ["ms"] = "milliseconds",
        ["us"] = "microseconds",
        ["ns"] = "nanoseconds",
        ["min"] = "minutes",
        ["h"] = "hours",
        ["d"] = "days",
        ["By"] = "bytes",
        ["KiBy"] = "kibibytes",
        ["MiBy"] = "mebibytes",
        ["%"] = "percent",
    };

    public static void WriteTargetInfo(StringBuilder text, Resource resource)
    {
        text.Append("# TYPE target_info gauge\n# HELP target_info Target metadata\ntarget_info{");
        var first = true;
        foreach (var (key, value) in resource.Attributes)
        {
            first = Label(text, first, key, value);
        }

        text.Append("} 1\n");
    }

    public static void Write(StringBuilder text, Metric metric)
    {
        var type = metric.MetricType;
        var counter = type is MetricType.LongSum or MetricType.DoubleSum;
        var histogram = type == MetricType.Histogram;
        if (!counter && !histogram && type is not (MetricType.LongSumNonMonotonic or MetricType.DoubleSumNonMonotonic or MetricType.LongGauge or MetricType.DoubleGauge))
        {
            // Exponential histograms have no place in the 0.0.4 text format; no meter exported here makes one.
            return;
        }

        var name = Name(metric.Name, metric.Unit, counter);
        text.Append("# TYPE ").Append(name).Append(counter ? " counter\n" : histogram ? " histogram\n" : " gauge\n");
        if (!string.IsNullOrEmpty(metric.Description))
        {
            text.Append("# HELP ").Append(name).Append(' ').Append(metric.Description.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\n", "\\n", StringComparison.Ordinal)).Append('\n');
        }

        foreach (ref readonly var point in metric.GetMetricPoints())
        {
            if (!histogram)
            {
                Series(text, name, "", metric.MeterName, point.Tags, null);
                Number(text, type switch
                {
                    MetricType.LongSum or MetricType.LongSumNonMonotonic => point.GetSumLong(),
                    MetricType.DoubleSum or MetricType.DoubleSumNonMonotonic => point.GetSumDouble(),
                    MetricType.LongGauge => point.GetGaugeLastValueLong(),
                    _ => point.GetGaugeLastValueDouble(),
                });
                continue;
            }

            long cumulative = 0;
            foreach (var bucket in point.GetHistogramBuckets())
            {
                cumulative += bucket.BucketCount;
                Series(text, name, "_bucket", metric.MeterName, point.Tags, bucket.ExplicitBound);
                Number(text, cumulative);
            }

            Series(text, name, "_sum", metric.MeterName, point.Tags, null);
            Number(text, point.GetHistogramSum());
            Series(text, name, "_count", metric.MeterName, point.Tags, null);
            Number(text, point.GetHistogramCount());
        }
    }

    /// <summary><c>dotnet.process.cpu.time</c> in <c>s</c>, a counter: <c>dotnet_process_cpu_time_seconds_total</c>.</summary>
    public static string Name(string instrument, string? unit, bool counter)
    {
        var name = new StringBuilder(Escape(instrument));
        if (UnitSuffix(unit) is { } suffix && !name.ToString().EndsWith("_" + suffix, StringComparison.Ordinal))
        {
            name.Append('_').Append(suffix);
        }

        if (counter)
        {
            name.Append("_total");
        }

        return name.ToString();
    }

    private static string? UnitSuffix(string? unit)
    {
        if (string.IsNullOrEmpty(unit) || unit.StartsWith('{'))
        {
            return null;
        }

        return UnitWords.TryGetValue(unit, out var word) ? word : Escape(unit);
    }

    private static string Escape(string name)
    {
        var escaped = new StringBuilder(name.Length);
        foreach (var c in name)
        {
            escaped.Append(char.IsAsciiLetterOrDigit(c) || c is '_' or ':' ? c : '_');
        }

        return escaped.ToString();
    }

    private static void Series(StringBuilder text, string name, string suffix, string scope, ReadOnlyTagCollection tags, double? le)
    {
        text.Append(name).Append(suffix).Append("{otel_scope_name=\"");
        Value(text, scope);
        text.Append('"');
        foreach (var (key, value) in tags)
        {
            Label(text, first: false, key, value);
        }

        if (le is { } bound)
        {
            text.Append(",le=\"");
            Number(text, bound, end: false);
            text.Append('"');
        }

        text.Append("} ");
    }

    private static bool Label(StringBuilder text, bool first, string key, object? value)
    {
        text.Append(first ? "" : ",").Append(Escape(key)).Append("=\"");
        // Booleans as OpenTelemetry's exporters write them (true/false), not as bool.ToString() does (True/False).
        Value(text, value is bool flag ? (flag ? "true" : "false") : Convert.ToString(value, CultureInfo.InvariantCulture) ?? "");
        text.Append('"');
        return false;
    }

    private static void Value(StringBuilder text, string value)
    {
        foreach (var c in value)
        {
            _ = c switch
            {
                '\\' => text.Append("\\\\"),
                '"' => text.Append("\\\""),
                '\n' => text.Append("\\n"),
                _ => text.Append(c),
            };
        }
    }

    private static void Number(StringBuilder text, long value) => text.Append(value.ToString(CultureInfo.InvariantCulture)).Append('\n');

    private static void Number(StringBuilder text, double value, bool end = true)
    {
        text.Append(double.IsPositiveInfinity(value) ? "+Inf"
            : double.IsNegativeInfinity(value) ? "-Inf"
            : double.IsNaN(value) ? "NaN"
            : value.ToString("R", CultureInfo.InvariantCulture));
        if (end)
        {
            text.Append('\n');
        }
    }
}
