using System.Diagnostics.Metrics;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// The Meter <c>DiagnosticScenarios</c>, read from outside the process by
/// <c>dotnet-counters monitor -n DiagnosticScenarios --counters System.Runtime,DiagnosticScenarios</c>
/// next to the runtime's own <c>dotnet.thread_pool.*</c> instruments.
/// </summary>
public sealed class HealthMetrics
{
    public const string MeterName = "DiagnosticScenarios";
    public const string QueueDelayInstrument = "diagnosticscenarios.threadpool.queue_delay";
    public const string PendingProbeInstrument = "diagnosticscenarios.threadpool.queue_delay.pending";
    public const string InjectionsInstrument = "diagnosticscenarios.threadpool.injections";
    public const string HoldTimeInstrument = "diagnosticscenarios.http.server.thread_hold_time";
    public const string HoldingInstrument = "diagnosticscenarios.http.server.requests_holding_thread";

    private readonly Histogram<double> _queueDelay;
    private readonly Histogram<double> _holdTime;

    public HealthMetrics(IMeterFactory meterFactory)
    {
        Meter = meterFactory.Create(MeterName);
        _queueDelay = Meter.CreateHistogram<double>(QueueDelayInstrument, "ms", "How long a work item queued by the probe waited for a thread-pool thread.");
        _holdTime = Meter.CreateHistogram<double>(HoldTimeInstrument, "ms", "How long a request held the thread it started on before it first yielded it.");
    }

    internal Meter Meter { get; }

    public void RecordQueueDelay(double milliseconds) => _queueDelay.Record(milliseconds);

    /// <summary>Records a request's hold time; <paramref name="routeTag"/> is the endpoint's cached <c>http.route</c> tag.</summary>
    public void RecordHoldTime(KeyValuePair<string, object?> routeTag, double milliseconds) => _holdTime.Record(milliseconds, routeTag);

    /// <summary>The instruments read from the detector's state, created once that state exists.</summary>
    internal void Observe(QueueDelayProbe probe, ThreadInjectionListener injections, EndpointAttribution attribution)
    {
        Meter.CreateObservableGauge(PendingProbeInstrument, probe.OldestPendingMs, "ms", "How long the oldest probe still in the queue has waited so far (0 when none waits).");
        Meter.CreateObservableCounter(InjectionsInstrument, () => new[]
        {
            new Measurement<long>(injections.Starvation, new KeyValuePair<string, object?>("reason", "starvation")),
            new Measurement<long>(injections.CooperativeBlocking, new KeyValuePair<string, object?>("reason", "cooperative_blocking")),
        }, "{adjustment}", "Thread-pool worker-goal adjustments by the runtime's reason.");
        Meter.CreateObservableUpDownCounter(HoldingInstrument, () => attribution.All
            .Select(e => new Measurement<long>(e.Holding, e.RouteTag)), "{request}", "Requests running synchronously on their thread right now.");
    }
}
