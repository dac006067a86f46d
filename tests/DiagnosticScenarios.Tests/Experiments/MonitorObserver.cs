using System.Diagnostics;
using System.Net.Http.Json;
using System.Text.Json;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// Reads the monitor's <c>GET /api/threadpool</c> on the live page's own server once a second for the whole run, as a
/// dashboard polling the app would: the pool, the probe, the detector's verdict and the injections by reason.
/// </summary>
internal sealed class MonitorObserver : IRunObserver
{
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    public string Name => "monitor (GET /api/threadpool on the live page's server)";

    public async Task<IObservation> AttachAsync(RunContext run)
    {
        var client = new HttpClient { BaseAddress = run.LivePage, Timeout = TimeSpan.FromSeconds(10) };
        var observation = new Observation(client);
        await observation.ReadAsync().DefaultTimeout();
        observation.Start(run.Stopping);
        return observation;
    }

    private sealed class Observation(HttpClient client) : IObservation
    {
        private readonly List<MonitorRead> _reads = [];
        private Task _polling = Task.CompletedTask;

        public void Start(CancellationToken stopping) => _polling = PollAsync(stopping);

        public async Task ReadAsync()
        {
            var asked = DateTimeOffset.UtcNow;
            var clock = Stopwatch.StartNew();
            var snapshot = await client.GetFromJsonAsync<JsonElement>(new Uri("api/threadpool", UriKind.Relative));
            lock (_reads)
            {
                _reads.Add(new MonitorRead(asked, clock.Elapsed, snapshot));
            }
        }

        public async Task<object> StopAsync()
        {
#pragma warning disable VSTHRD003 // deliberate: this observation's own background work; tests have no SynchronizationContext to deadlock on
            await _polling.DefaultTimeout();
#pragma warning restore VSTHRD003
            await ReadAsync().DefaultTimeout();
            client.Dispose();
            lock (_reads)
            {
                return new MonitorRecord([.. _reads]);
            }
        }

        private async Task PollAsync(CancellationToken stopping)
        {
            while (!stopping.IsCancellationRequested)
            {
                await Task.Delay(Interval, stopping).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                if (!stopping.IsCancellationRequested)
                {
                    await ReadAsync();
                }
            }
        }
    }
}

/// <summary>Every read of the monitor during a run, the last one after the load was over.</summary>
internal sealed record MonitorRecord(IReadOnlyList<MonitorRead> Reads)
{
    public JsonElement Last => Reads[^1].Snapshot;

    /// <summary>The injections by reason the monitor counted by the end of the run.</summary>
    public long Injections(string reason) => Last.GetProperty("injections").GetProperty(reason).GetInt64();
}

/// <summary>One read: when it was asked, how long the answer took, and the snapshot.</summary>
internal sealed record MonitorRead(DateTimeOffset AskedAt, TimeSpan AnsweredIn, JsonElement Snapshot);
