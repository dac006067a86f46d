using DiagnosticScenarios.Tests.Metrics;

namespace DiagnosticScenarios.Tests.Observed;

/// <summary>
/// Debian's Prometheus, configured from the repository's monitoring/ files, scraping the run's live page every second from
/// before the load until after it, and evaluating the shipped alert rules; its record is the alert's history.
/// </summary>
/// <remarks>
/// Started beside the server, on the live page's port the run picks for it: Prometheus's discovery hands a new target to
/// its scrapers only every five seconds, which would otherwise be waited out after the server is up.
/// </remarks>
internal sealed class PrometheusObserver : IRunObserver, IAsyncDisposable
{
    private readonly Task<PrometheusWatch> _starting;
    private bool _attached;

    private PrometheusObserver(Task<PrometheusWatch> starting) => _starting = starting;

    public string Name => "Prometheus (monitoring/prometheus.yml, alerts.yml)";

    /// <summary>Starts Prometheus scraping <paramref name="livePage"/>, where the run's server is about to serve it.</summary>
    public static PrometheusObserver StartBefore(Uri livePage) => new(PrometheusWatch.StartAsync(livePage));

#pragma warning disable VSTHRD003 // deliberate: the start this observer began; tests have no SynchronizationContext to deadlock on
    public async Task<IObservation> AttachAsync(RunContext run)
    {
        var watch = await _starting;
        _attached = true;
        if (run.LivePage.Port != watch.Target.Port)
        {
            await watch.DisposeAsync();
            throw new InvalidOperationException($"The live page serves on {run.LivePage}, not on the port Prometheus scrapes ({watch.Target}).");
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
