using System.Text;
using OpenTelemetry;
using OpenTelemetry.Metrics;

namespace DiagnosticScenarios.PoolHealth.Metrics;

/// <summary>
/// The Prometheus scrape, collected on the thread that asks for it: the live page's server answers <c>GET /metrics</c>
/// with it on a thread of the app's own, so Prometheus keeps its series while the pool starves. OpenTelemetry's own
/// Prometheus exporter (OpenTelemetry.Exporter.Prometheus.AspNetCore 1.20.1-beta.1) cannot be served that way: each
/// collection it starts is queued to the thread pool (<c>Task.Run</c>) and the scrape awaits it, so a scrape invoked on a
/// dedicated thread of a starved process times out. A metric reader of the SDK's own, collected here,
/// runs the observable instruments' callbacks and <see cref="PrometheusText"/> on the calling thread.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The meter provider owns the reader and disposes it with its exporter at shutdown.")]
public sealed class PrometheusScrape
{
    // A collection takes about a millisecond; an instrument callback that hangs must not hold a scrape forever.
    private const int CollectTimeoutMs = 5000;

    private readonly TextExporter _exporter = new();

    // One collection at a time: the exporter writes into one buffer, and MetricReader.Collect would block a second caller
    // until the first's collection ended anyway.
    private readonly Lock _lock = new();

    public PrometheusScrape() => Reader = new BaseExportingMetricReader(_exporter);

    /// <summary>Added to the SDK's meter provider, which owns and disposes it.</summary>
    internal MetricReader Reader { get; }

    /// <summary>Collects every instrument now; null when the SDK has not started yet or the collection failed.</summary>
    public byte[]? Collect()
    {
        lock (_lock)
        {
            _exporter.Text.Clear();
            return Reader.Collect(CollectTimeoutMs) ? Encoding.UTF8.GetBytes(_exporter.Text.ToString()) : null;
        }
    }

    // Push and pull both (no ExportModes attribute): the SDK lets a pull-only exporter be collected only by its own
    // Prometheus exporters. Nothing pushes to it; a collection happens when Collect asks for one (or at shutdown).
    private sealed class TextExporter : BaseExporter<Metric>
    {
        public StringBuilder Text { get; } = new(64 * 1024);

        public override ExportResult Export(in Batch<Metric> batch)
        {
            if (ParentProvider?.GetResource() is { } resource)
            {
                PrometheusText.WriteTargetInfo(Text, resource);
            }

            foreach (var metric in batch)
            {
                PrometheusText.Write(Text, metric);
            }

            return ExportResult.Success;
        }
    }
}
