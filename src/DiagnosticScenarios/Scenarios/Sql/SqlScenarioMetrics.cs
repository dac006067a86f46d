using System.Diagnostics.Metrics;

namespace DiagnosticScenarios.Scenarios.Sql;

/// <summary>
/// Time spent opening a connection (waiting for the pool, or logging in a new one), per provider and shape, so a pool
/// that is too small shows up beside the thread counts: <c>dotnet-counters monitor -n DiagnosticScenarios --counters DiagnosticScenarios.Sql</c>.
/// </summary>
public sealed class SqlScenarioMetrics
{
    public const string MeterName = "DiagnosticScenarios.Sql";

    /// <summary>How late the embedded responder sent a WAITFOR's answer past its due time, in ms.</summary>
    public const string WaitforLatenessInstrument = "diagnosticscenarios.sql.responder.waitfor_lateness";

    private readonly Histogram<double> _connectionWait;
    private readonly Histogram<double> _waitforLateness;

    public SqlScenarioMetrics(IMeterFactory meterFactory)
    {
        ArgumentNullException.ThrowIfNull(meterFactory);
        var meter = meterFactory.Create(MeterName);
        _connectionWait = meter.CreateHistogram<double>("diagnosticscenarios.sql.connection_wait", unit: "ms", description: "Time to open a connection: pool wait plus login when the pool has none free.");
        _waitforLateness = meter.CreateHistogram<double>(WaitforLatenessInstrument, unit: "ms", description: "How late the embedded TDS responder answered a WAITFOR past its due time: near zero, since it runs on threads of its own, not on the pool the scenarios starve.");
    }

    public void RecordConnectionWait(TimeSpan wait, DatabaseProvider provider, string scenario) =>
        _connectionWait.Record(wait.TotalMilliseconds, new KeyValuePair<string, object?>("provider", provider.ToString()), new KeyValuePair<string, object?>("scenario", scenario));

    public void RecordWaitforLateness(TimeSpan lateness) => _waitforLateness.Record(lateness.TotalMilliseconds);
}
