using DiagnosticScenarios.Controls;
using DiagnosticScenarios.Detection;
using DiagnosticScenarios.StackCapture;

namespace DiagnosticScenarios.LivePage;

/// <summary>What the page reads, the same on the app's routes and on the live page's own server.</summary>
public sealed class LivePageData(
    QueueDelayProbe probe,
    EndpointAttribution attribution,
    HealthSampler detector,
    ThreadInjectionListener injections,
    LoadRunLauncher launcher,
    StackCaptureService capture)
{
    public HealthSnapshot Snapshot() => HealthSnapshot.Take(probe, attribution, detector, injections);

    public LoadStatus Load() => launcher.Status();

    public (int Status, object Body) LatestCapture() => StackCaptureRegistration.Answer(capture.Latest);
}
