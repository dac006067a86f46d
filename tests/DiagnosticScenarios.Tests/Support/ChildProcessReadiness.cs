using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Support;

internal static class ChildProcessReadiness
{
    /// <summary>
    /// Waits until <paramref name="ready"/> (set by a line the child prints once it is doing its work) completes; when the
    /// child exits first or <paramref name="patience"/> runs out, disposes the child and throws, with what it printed.
    /// </summary>
#pragma warning disable VSTHRD003 // deliberate: the caller's own readiness signal; tests have no SynchronizationContext to deadlock on
    public static async Task<ChildProcess> WhenReadyAsync(this ChildProcess child, Task ready, TimeSpan patience, string endedBeforeReady)
    {
        try
        {
            await Task.WhenAny(ready, child.WaitForExitAsync()).TimeoutAfter(patience);
            if (!ready.IsCompleted)
            {
                throw new InvalidOperationException($"{endedBeforeReady}: {await child.WaitForExitAsync()}");
            }
        }
        catch
        {
            await child.DisposeAsync();
            throw;
        }

        return child;
    }
#pragma warning restore VSTHRD003
}
