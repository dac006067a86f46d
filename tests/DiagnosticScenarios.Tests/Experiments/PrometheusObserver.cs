using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.PoolHealth.Metrics;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// Debian's Prometheus, configured from the repository's monitoring/ files, scraping the run's live page every second from
/// before the load until after it, and evaluating the shipped alert rules; its record is the alert's history.
/// </summary>
/// <remarks>
/// Started ahead of the run, on the live page's port the run's server is then given: Prometheus's discovery hands a new
/// target to its scrapers only five seconds after it starts, which would otherwise be waited out after the server is up.
/// </remarks>
internal sealed class PrometheusObserver : IRunObserver, IAsyncDisposable
{
    private readonly Task<PrometheusWatch> _starting;
    private bool _attached;

    private PrometheusObserver(Uri livePage)
    {
        LivePage = livePage;
        _starting = PrometheusWatch.StartAsync(livePage);
    }

    public string Name => "Prometheus (monitoring/prometheus.yml, alerts.yml)";

    /// <summary>Starts Prometheus scraping a port below the ephemeral range, where a run's server will serve its live page.</summary>
    public static PrometheusObserver StartAhead() => new(new Uri($"http://127.0.0.1:{FreeLoopbackPort.PickBelowTheEphemeralRange()}/"));

    /// <summary>Where the run's server must serve its live page (<c>LivePage__Port</c>).</summary>
    public Uri LivePage { get; }

#pragma warning disable VSTHRD003 // deliberate: the start this observer began; tests have no SynchronizationContext to deadlock on
    public async Task<IObservation> AttachAsync(RunContext run)
    {
        var watch = await _starting;
        _attached = true;
        try
        {
            if (run.LivePage.Port != LivePage.Port)
            {
                throw new InvalidOperationException($"The live page serves on {run.LivePage}, not on the port Prometheus scrapes ({LivePage}).");
            }

            await watch.WatchAsync();
        }
        catch
        {
            await watch.DisposeAsync();
            throw;
        }

        return new Observation(watch);
    }

    /// <summary>Stops Prometheus when the run ended before it attached (the server did not start, say).</summary>
    public async ValueTask DisposeAsync()
    {
        await ((Task)_starting).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        if (!_attached && _starting.IsCompletedSuccessfully)
        {
            await (await _starting).DisposeAsync();
        }
    }
#pragma warning restore VSTHRD003

    private sealed class Observation(PrometheusWatch watch) : IObservation
    {
        public async Task<object> StopAsync()
        {
            await using (watch)
            {
                return await watch.StopAsync();
            }
        }
    }
}
