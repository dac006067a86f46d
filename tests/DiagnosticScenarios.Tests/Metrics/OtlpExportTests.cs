using System.Diagnostics;
using System.Globalization;
using System.Text;
using DiagnosticScenarios.Infrastructure;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.Load;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Metrics;

/// <summary>
/// OTLP export when <c>OTEL_EXPORTER_OTLP_ENDPOINT</c> is set, over HTTP/protobuf, to a receiver on threads of its own.
/// The SDK's periodic reader exports from a thread of its own with a synchronous <c>HttpClient.Send</c>, so the export goes
/// on while the pool starves; over gRPC the SDK sends with <c>SendAsync(...).GetAwaiter().GetResult()</c> and HTTP/2 reads
/// its frames on the pool.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class OtlpExportTests(ITestOutputHelper output)
{
    private static readonly TimeSpan ExportInterval = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan StarvedFor = TimeSpan.FromSeconds(4);

    [Fact]
    public async Task OtlpExport_ArrivesEverySecond_WhileABlockingBurstStarvesThePool()
    {
        using var receiver = new OtlpReceiver();
        await using var server = await ServerProcess.StartAsync(new ServerOptions
        {
            AppPath = LoadExperiment.AppPath,
            ProcessorCount = 2,
            ExtraEnvironment = new Dictionary<string, string>
            {
                ["OTEL_EXPORTER_OTLP_ENDPOINT"] = $"http://127.0.0.1:{receiver.Port}",
                ["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf",
                ["OTEL_METRIC_EXPORT_INTERVAL"] = $"{ExportInterval.TotalMilliseconds:0}",
            },
        }).WaitAsync(MeasurementCache.MeasurementTimeout);
        using var app = new HttpClient { BaseAddress = server.BaseAddress, Timeout = Timeout.InfiniteTimeSpan };
        // An export collected after the server answered its ready ping, so it carries a request's duration too.
        var first = await receiver.WaitForExportAsync(after: DateTimeOffset.UtcNow).DefaultTimeout();

        using var leave = new CancellationTokenSource();
        var burst = app.GetAsync(new Uri("api/diagscenario/taskburst", UriKind.Relative), leave.Token);
        IReadOnlyList<DateTimeOffset> duringStarvation;
        bool pingAnswered;
        TimeSpan window;
        try
        {
            // A second for the burst's tasks to take every pool thread.
            await Task.Delay(TimeSpan.FromSeconds(1));
            var from = DateTimeOffset.UtcNow;
            pingAnswered = await Ping.AnswerTimeAsync(app, TimeSpan.FromSeconds(1)) is not null;
            // Physics sets this interval: exports arrive on the exporter's own clock; this counts them over a fixed window.
            await Task.Delay(StarvedFor - TimeSpan.FromSeconds(1));
            pingAnswered |= await Ping.AnswerTimeAsync(app, TimeSpan.FromSeconds(1)) is not null;
            var to = DateTimeOffset.UtcNow;
            duringStarvation = receiver.ArrivalsBetween(from, to);
            window = to - from;
        }
        finally
        {
            await leave.CancelAsync();
            await ((Task)burst).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
        }

        var gaps = duringStarvation.Zip(duringStarvation.Skip(1), (a, b) => (b - a).TotalMilliseconds).ToList();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{duringStarvation.Count} exports in {window.TotalSeconds:0.0} s of starvation, gaps {string.Join(" ", gaps.Select(g => $"{g:0}"))} ms; first export {first.Length} bytes"));
        Assert.False(pingAnswered, "ping answered during the burst: the pool was not starved, so this test proves nothing");
        Assert.True(duringStarvation.Count >= StarvedFor.TotalSeconds - 1, $"only {duringStarvation.Count} exports arrived in {StarvedFor.TotalSeconds:0} s of starvation");
        Assert.True(gaps.Max() < 2 * ExportInterval.TotalMilliseconds, $"an export came {gaps.Max():0} ms after the one before it while the pool starved");
        var text = Encoding.UTF8.GetString(first);
        foreach (var name in new[] { "dotnet.thread_pool.queue.length", "dotnet.process.cpu.time", "http.server.request.duration", "diagnosticscenarios.threadpool.queue_delay", "DiagnosticScenarios" })
        {
            Assert.Contains(name, text, StringComparison.Ordinal);
        }
    }

    /// <summary>An OTLP/HTTP metrics endpoint on threads of its own: it keeps each export's body and arrival time.</summary>
    private sealed class OtlpReceiver : IDisposable
    {
        private readonly ThreadedHttpServer _server;
        private readonly List<(DateTimeOffset At, byte[] Body)> _exports = [];
        private readonly Lock _lock = new();

        public OtlpReceiver()
        {
            _server = new ThreadedHttpServer("otlp receiver", 8, Receive);
            _server.Start(FreeLoopbackPort.Pick());
        }

        public int Port => _server.Port;

        public IReadOnlyList<DateTimeOffset> ArrivalsBetween(DateTimeOffset from, DateTimeOffset to)
        {
            lock (_lock)
            {
                return [.. _exports.Where(e => e.At >= from && e.At <= to).Select(e => e.At)];
            }
        }

        public async Task<byte[]> WaitForExportAsync(DateTimeOffset after)
        {
            var waited = Stopwatch.StartNew();
            while (true)
            {
                lock (_lock)
                {
                    if (_exports.FirstOrDefault(e => e.At > after) is { Body: not null } export)
                    {
                        return export.Body;
                    }
                }

                if (waited.Elapsed > TimeSpan.FromSeconds(20))
                {
                    throw new TimeoutException("No OTLP export arrived within 20 s.");
                }

                await Task.Delay(100);
            }
        }

        public void Dispose() => _server.Dispose();

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
    }
}
