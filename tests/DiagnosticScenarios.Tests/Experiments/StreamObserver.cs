using System.Net.ServerSentEvents;
using System.Text.Json;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// Reads <c>GET /api/threadpool/stream</c> from the live page's server for the whole run with <see cref="SseParser"/>,
/// noting when each sample arrived: the series the page draws.
/// </summary>
internal sealed class StreamObserver : IRunObserver
{
    public string Name => "stream from the live page's server";

    public async Task<IObservation> AttachAsync(RunContext run)
    {
        var client = new HttpClient { Timeout = Timeout.InfiniteTimeSpan };
        var address = new Uri(run.LivePage, "api/threadpool/stream");
        var response = await client.GetAsync(address, HttpCompletionOption.ResponseHeadersRead).DefaultTimeout();
        response.EnsureSuccessStatusCode();
        var openedAt = DateTimeOffset.UtcNow;
        var body = await response.Content.ReadAsStreamAsync().DefaultTimeout();
        return new Observation(client, response, body, openedAt, run.Stopping);
    }

    private sealed class Observation : IObservation
    {
        private readonly HttpClient _client;
        private readonly HttpResponseMessage _response;
        private readonly DateTimeOffset _openedAt;
        private readonly List<StreamArrival> _arrivals = [];
        private readonly Task _reading;

        public Observation(HttpClient client, HttpResponseMessage response, Stream body, DateTimeOffset openedAt, CancellationToken stopping)
        {
            (_client, _response, _openedAt) = (client, response, openedAt);
            _reading = ReadAsync(body, stopping);
        }

        public async Task<object> StopAsync()
        {
            var stoppedAt = DateTimeOffset.UtcNow;
#pragma warning disable VSTHRD003 // deliberate: this observation's own background work; tests have no SynchronizationContext to deadlock on
            await _reading.DefaultTimeout();
#pragma warning restore VSTHRD003
            _response.Dispose();
            _client.Dispose();
            lock (_arrivals)
            {
                return new StreamRecord(_openedAt, stoppedAt, [.. _arrivals]);
            }
        }

        private async Task ReadAsync(Stream body, CancellationToken stopping)
        {
            var parser = SseParser.Create(body, (type, data) => type == "sample" ? JsonSerializer.Deserialize<JsonElement>(data) : default);
            try
            {
                await foreach (var item in parser.EnumerateAsync(stopping))
                {
                    var arrivedAt = DateTimeOffset.UtcNow;
                    if (item.EventType == "sample")
                    {
                        lock (_arrivals)
                        {
                            _arrivals.Add(new StreamArrival(item.Data.GetProperty("sequence").GetInt64(), item.Data.GetProperty("unixTimeMs").GetInt64(), arrivedAt, item.Data));
                        }
                    }
                }
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                // The run is over.
            }
        }
    }
}

/// <summary>One sample as it arrived: its sequence, when the app took it, when it got here, and the sample.</summary>
internal sealed record StreamArrival(long Sequence, long TakenAtUnixMs, DateTimeOffset ArrivedAt, JsonElement Sample)
{
    public DateTimeOffset TakenAt => DateTimeOffset.FromUnixTimeMilliseconds(TakenAtUnixMs);

    public bool Starved => Sample.GetProperty("starved").GetBoolean();

    /// <summary>Why the detector's rule said starved or not, with the figures it read.</summary>
    public string? Starvation => Sample.GetProperty("starvation").GetString();

    /// <summary>The longest one of the probe's work items waited for a pool thread in the sample's second.</summary>
    public TimeSpan QueueDelay => TimeSpan.FromMilliseconds(Sample.GetProperty("queueDelayMs").GetDouble());

    public TimeSpan Lag => ArrivedAt - TakenAt;
}

/// <summary>A stream read for a whole run: when it opened, when it was stopped, and every sample that arrived in between.</summary>
internal sealed record StreamRecord(DateTimeOffset OpenedAt, DateTimeOffset StoppedAt, IReadOnlyList<StreamArrival> Arrivals)
{
    /// <summary>The samples taken after the stream opened (not replayed from the app's history), oldest first.</summary>
    public IReadOnlyList<StreamArrival> Live => [.. Arrivals.Where(a => a.TakenAt >= OpenedAt)];
}
