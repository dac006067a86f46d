using System.Globalization;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.OffPool;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// An OTLP/HTTP metrics endpoint on threads of its own, where the run's server exports its metrics once a second
/// (<c>OTEL_EXPORTER_OTLP_ENDPOINT</c>, over HTTP/protobuf); its record is when each export arrived, and the first one's body.
/// </summary>
/// <remarks>Started before the server: the endpoint is in the server's environment.</remarks>
internal sealed class OtlpObserver : IRunObserver, IDisposable
{
    /// <summary>The SDK's export interval the server is given (<c>OTEL_METRIC_EXPORT_INTERVAL</c>).</summary>
    public static readonly TimeSpan ExportInterval = TimeSpan.FromSeconds(1);

    private static readonly TimeSpan FirstExportPatience = TimeSpan.FromSeconds(20);

    private readonly ThreadedHttpServer _server;
    private readonly List<(DateTimeOffset At, byte[] Body)> _exports = [];
    private readonly Lock _lock = new();

    private OtlpObserver()
    {
        _server = new ThreadedHttpServer("otlp receiver", new OffPoolLimits { MaxConnections = 8, MaxStreams = 0 }, Receive);
        _server.Start(FreeLoopbackPort.Pick());
    }

    public string Name => "OTLP/HTTP receiver (OTEL_EXPORTER_OTLP_ENDPOINT)";

    /// <summary>Starts the receiver and points the server's environment at it.</summary>
    public static OtlpObserver StartBefore(Dictionary<string, string> serverEnvironment)
    {
        var observer = new OtlpObserver();
        serverEnvironment["OTEL_EXPORTER_OTLP_ENDPOINT"] = $"http://127.0.0.1:{observer._server.Port}";
        serverEnvironment["OTEL_METRIC_EXPORT_INTERVAL"] = ExportInterval.TotalMilliseconds.ToString("0", CultureInfo.InvariantCulture);
        return observer;
    }

    /// <summary>Returns once an export has arrived since the server was up: it carries the requests the server has answered.</summary>
    public async Task<IObservation> AttachAsync(RunContext run)
    {
        var after = DateTimeOffset.UtcNow;
        byte[]? first = null;
        if (!await Poll.UntilAsync(() => (first = FirstAfter(after)) is not null, FirstExportPatience))
        {
            throw new TimeoutException($"No OTLP export arrived within {FirstExportPatience.TotalSeconds:0} s of the server being up.");
        }

        return new Observation(this, first!);
    }

    public void Dispose() => _server.Dispose();

    private byte[]? FirstAfter(DateTimeOffset after)
    {
        lock (_lock)
        {
            return _exports.FirstOrDefault(e => e.At > after).Body;
        }
    }

    private void Receive(HttpExchange exchange)
    {
        if (exchange.Request is { Method: "POST", Path: "/v1/metrics" })
        {
            lock (_lock)
            {
                _exports.Add((DateTimeOffset.UtcNow, exchange.Request.Body));
            }
        }

        exchange.Respond(200, "application/x-protobuf", []);
    }

    private sealed class Observation(OtlpObserver observer, byte[] first) : IObservation
    {
        public Task<object> StopAsync()
        {
            lock (observer._lock)
            {
                return Task.FromResult<object>(new OtlpRecord([.. observer._exports.Select(e => e.At)], first));
            }
        }
    }
}

/// <summary>When each OTLP export of the run arrived, and the body of the first one after the server was up.</summary>
internal sealed record OtlpRecord(IReadOnlyList<DateTimeOffset> Arrivals, byte[] FirstExport);
