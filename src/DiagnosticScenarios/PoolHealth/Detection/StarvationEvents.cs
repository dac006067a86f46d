using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// The detector's one event: starvation declared by <see cref="StarvationRule"/>, at most once per
/// <see cref="ThreadPoolHealthOptions.StarvationEventIntervalSeconds"/> (<see cref="StarvationThrottle"/>). The log line and
/// the stack capture subscribe to it by registering an <see cref="IStarvationListener"/>.
/// </summary>
/// <param name="Sample">The second in which it was declared.</param>
/// <param name="Verdict">The rule's evidence.</param>
public sealed record StarvationDeclared(HealthSample Sample, StarvationVerdict Verdict);

/// <summary>Told of each <see cref="StarvationDeclared"/>, on the detector's own thread: it must return at once.</summary>
public interface IStarvationListener
{
    void OnStarvation(StarvationDeclared starvation);
}
