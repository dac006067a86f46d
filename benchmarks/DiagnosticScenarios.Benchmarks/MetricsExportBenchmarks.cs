using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using BenchmarkDotNet.Attributes;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.PoolHealth.Metrics;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;

namespace DiagnosticScenarios.Benchmarks;

/// <summary>
/// What the metrics export adds to one request, without the machine's noise: a ping through ASP.NET Core's hosting and
/// the attribution, on two hosts (<see cref="Host"/>), with the export off, on, and on without ASP.NET Core's <c>http.server.request.duration</c> (the switches the app reads). The
/// differences are what the SDK's listening switches on per request: that instrument, and the app's hold time. A fourth
/// side listens to that instrument alone with a <see cref="MeterListener"/> that does nothing with what it hears: what
/// ASP.NET Core itself pays once anything listens, before any SDK aggregates a measurement.
/// </summary>
[MemoryDiagnoser]
public class MetricsExportBenchmarks : IDisposable
{
    private WebApplication _app = null!;
    private TestServer _server = null!;
    private readonly MeterListener _listener = new();

    /// <summary>
    /// <c>off</c>; <c>on</c>, as the app ships; <c>on, no request duration</c>: <c>MetricsExport:RequestDuration=false</c>;
    /// <c>bare listener</c>: the export off, and a listener that enables the request duration and ignores it.
    /// </summary>
    [Params("off", "on", "on, no request duration", "bare listener")]
    public string Export { get; set; } = "off";

    /// <summary>
    /// <c>in memory</c>: TestServer, a new request context for every request, no sockets. <c>Kestrel</c>: the server the app
    /// runs on, on a loopback port, one keep-alive connection that sends <see cref="Batch"/> pings at once (HTTP/1.1
    /// pipelining) and reads their answers, so the socket's wake-ups are shared by many requests and the server's work per
    /// request is what is left; the client is a bare socket with buffers of its own, so what it allocates is the same on
    /// every side. Kestrel reuses a connection's request context and its features from one request to the next, which
    /// TestServer cannot.
    /// </summary>
    [Params("in memory", "Kestrel")]
    public string Host { get; set; } = "in memory";

    /// <summary>Requests per operation; the figures are per request.</summary>
    private const int Batch = 64;

    private const string PingPath = "/api/diagscenario/ping";
    private static readonly byte[] Requests = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat($"GET {PingPath} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", Batch)));
    private readonly byte[] _buffer = new byte[64 * 1024];
    private Socket? _socket;

    /// <summary>The length of one answer: every answer has the same (the date header's format has a fixed width).</summary>
    private int _answerLength;

    [GlobalSetup]
    public async Task SetupAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        if (Host == "Kestrel")
        {
            builder.WebHost.UseKestrel(options => options.Listen(IPAddress.Loopback, 0));
        }
        else
        {
            builder.WebHost.UseTestServer();
        }

        // As the app's appsettings.json has it: ASP.NET Core logs warnings only, so no side logs its requests.
        builder.Logging.AddFilter("Microsoft.AspNetCore", LogLevel.Warning);
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["MetricsExport:Enabled"] = Export is "off" or "bare listener" ? "false" : "true",
            ["MetricsExport:RequestDuration"] = Export == "on" ? "true" : "false",
        });
        builder.Services.AddDetection(builder.Configuration);
        builder.Services.AddMetricsExport(builder.Configuration);
        _app = builder.Build();
        if (Export == "bare listener")
        {
            _listener.InstrumentPublished = static (instrument, listener) =>
            {
                if (instrument.Name == MetricsExportOptions.RequestDurationInstrument)
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<double>(static (_, _, _, _) => { });
            _listener.Start();
        }

        _app.UseEndpointAttribution();
        _app.MapGet(PingPath, () => "success:ping");
        await _app.StartAsync();
        if (Host == "Kestrel")
        {
            var address = new Uri(_app.Urls.Single());
            _socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            await _socket.ConnectAsync(IPAddress.Loopback, address.Port);
            _answerLength = await FirstAnswerLengthAsync(_socket);
        }
        else
        {
            _server = _app.GetTestServer();
        }
    }

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        _socket?.Dispose();
        _listener.Dispose();
        await _app.DisposeAsync();
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public async Task<int> Ping()
    {
        if (_socket is null)
        {
            var status = 0;
            for (var i = 0; i < Batch; i++)
            {
                var context = await _server.SendAsync(static context => context.Request.Path = PingPath);
                status = context.Response.StatusCode;
            }

            return status;
        }

        await _socket.SendAsync(Requests, SocketFlags.None);
        var expected = Batch * _answerLength;
        var read = 0;
        while (read < expected)
        {
            var n = await _socket.ReceiveAsync(_buffer.AsMemory(0, Math.Min(_buffer.Length, expected - read)), SocketFlags.None);
            read += n > 0 ? n : throw new InvalidOperationException("The server closed the connection.");
        }

        return read;
    }

    /// <summary>Sends one ping and reads its whole answer (chunked: it ends with the last, empty chunk).</summary>
    private static async Task<int> FirstAnswerLengthAsync(Socket socket)
    {
        var end = Encoding.ASCII.GetBytes("\r\n0\r\n\r\n");
        var buffer = new byte[4096];
        await socket.SendAsync(Requests.AsMemory(0, Requests.Length / Batch), SocketFlags.None);
        var read = 0;
        while (read < end.Length || !buffer.AsSpan(read - end.Length, end.Length).SequenceEqual(end))
        {
            var n = await socket.ReceiveAsync(buffer.AsMemory(read), SocketFlags.None);
            read += n > 0 ? n : throw new InvalidOperationException("The server closed the connection.");
        }

        var answer = Encoding.ASCII.GetString(buffer, 0, read);
        return answer.StartsWith("HTTP/1.1 200 ", StringComparison.Ordinal) && answer.Contains("success:ping", StringComparison.Ordinal)
            ? read
            : throw new InvalidOperationException($"Not the ping's answer: {answer}");
    }

    public void Dispose()
    {
        _socket?.Dispose();
        _listener.Dispose();
        GC.SuppressFinalize(this);
    }
}
