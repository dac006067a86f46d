using DiagnosticScenarios.Tests.Metrics;

namespace DiagnosticScenarios.Tests.Observed;

/// <summary>
/// Debian's Prometheus, configured from the repository's monitoring/ files, scraping the run's live page every second from
/// before the load until after it, and evaluating the shipped alert rules; its record is the alert's history.
/// </summary>
internal sealed class PrometheusObserver : IRunObserver
{
    public string Name => "Prometheus (monitoring/prometheus.yml, alerts.yml)";

    public async Task<IObservation> AttachAsync(RunContext run) => new Observation(await PrometheusWatch.StartAsync(run.LivePage));

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
