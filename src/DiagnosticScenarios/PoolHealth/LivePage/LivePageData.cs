using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.PoolHealth.StackCapture;

namespace DiagnosticScenarios.PoolHealth.LivePage;

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

    /// <summary>
    /// A capture taken now, waited for on the calling thread: the live page's own server's, so a starved pool cannot delay
    /// the answer (the capture's own thread completes it, and a synchronous wait needs no pool thread to wake). As long as
    /// the app's own request waits (<see cref="StackCaptureRegistration.CapturePatience"/>), or until its client goes: null then.
    /// </summary>
    public (int Status, object Body)? CaptureNow(Func<bool> clientHasGone)
    {
        var pending = capture.CaptureNowAsync();
        var waited = System.Diagnostics.Stopwatch.StartNew();
#pragma warning disable VSTHRD002 // deliberate: a thread of the page's own server waits, never a pool thread
        while (!pending.Wait(ClientCheck))
        {
            if (clientHasGone())
            {
                return null;
            }

            if (waited.Elapsed >= StackCaptureRegistration.CapturePatience)
            {
                return StackCaptureRegistration.NotInTime();
            }
        }

        return StackCaptureRegistration.Answer(pending.Result);
#pragma warning restore VSTHRD002
    }

    // How often a wait for a capture looks whether its client is still there.
    private static readonly TimeSpan ClientCheck = TimeSpan.FromMilliseconds(250);
}
