using System.Diagnostics;
using System.Runtime.InteropServices;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.PoolHealth.Controls;

/// <summary>
/// Makes Ctrl+C and SIGTERM end the process within the host's shutdown timeout even while the thread pool is starved.
/// The runtime hands these signals to a dedicated thread, but the host's graceful stop is async code that needs pool threads;
/// when none comes free, the stop never finishes. This watchdog waits the shutdown timeout on a thread of its own, then exits.
/// </summary>
public sealed partial class ShutdownWatchdog(IOptions<HostOptions> hostOptions, ILogger<ShutdownWatchdog> logger) : IHostedService, IDisposable
{
    /// <summary>The exit code of a stop the host could not finish in time.</summary>
    public const int ForcedExitCode = 3;

    // How long Environment.Exit may take before the process kills itself (SIGKILL, so another exit code): its ProcessExit
    // handlers run first, and one that waits on the starved pool holds it forever. OpenTelemetry's SDK registers one that
    // waits for a task of its own (1.20.1, self-diagnostics), which the metrics export brings in.
    private static readonly TimeSpan ExitGrace = TimeSpan.FromMilliseconds(250);

    private readonly List<PosixSignalRegistration> _registrations = [];
    private int _armed;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        // Registered after the host's own handlers, so it runs first; it does not cancel the signal, so the host still stops gracefully.
        foreach (var signal in new[] { PosixSignal.SIGINT, PosixSignal.SIGTERM, PosixSignal.SIGQUIT })
        {
            _registrations.Add(PosixSignalRegistration.Create(signal, _ => Arm()));
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public void Dispose()
    {
        foreach (var registration in _registrations)
        {
            registration.Dispose();
        }
    }

    private void Arm()
    {
        if (Interlocked.Exchange(ref _armed, 1) == 1)
        {
            return;
        }

        var timeout = hostOptions.Value.ShutdownTimeout;
        LogArmed(logger, timeout.TotalSeconds);
        new Thread(() =>
        {
            Thread.Sleep(timeout);
            LogForced(logger, timeout.TotalSeconds);
            new Thread(KillAfterGrace, maxStackSize: 256 * 1024) { Name = "shutdown-watchdog kill", IsBackground = true }.Start();
            Environment.Exit(ForcedExitCode);
        }, maxStackSize: 256 * 1024)
        { Name = "shutdown-watchdog", IsBackground = true }.Start();
    }

    private static void KillAfterGrace()
    {
        Thread.Sleep(ExitGrace);
        using var self = Process.GetCurrentProcess();
        self.Kill();
    }

    [LoggerMessage(EventId = 5201, Level = LogLevel.Information, Message = "Stopping: the process ends within the shutdown timeout of {TimeoutSeconds} s")]
    private static partial void LogArmed(ILogger logger, double timeoutSeconds);

    [LoggerMessage(EventId = 5202, Level = LogLevel.Critical, Message = "The host did not stop within its shutdown timeout of {TimeoutSeconds} s (is the thread pool starved?); ending the process")]
    private static partial void LogForced(ILogger logger, double timeoutSeconds);
}
