using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.Tests.Diagnosis;

namespace DiagnosticScenarios.Tests.Observed;

/// <summary>
/// The diagnosis CLI's <c>watch</c> on the run's server, started before the load as a user starts it on a healthy app:
/// it reads the runtime's counters over EventPipe until the starvation rule fires (then names the blocking code) or its
/// timeout, a few seconds past the load, passes.
/// </summary>
internal sealed class WatchObserver : IRunObserver
{
    // Past the load's end, so a quiet watch has read every second of the load before it gives up.
    private static readonly TimeSpan PastTheLoad = TimeSpan.FromSeconds(4);
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    public string Name => "dotnet-blocking watch";

    public async Task<IObservation> AttachAsync(RunContext run)
    {
        var reading = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var timeout = TimeSpan.FromSeconds(run.Plan.LoadSeconds) + PastTheLoad;
        var watch = ChildProcess.Start(new ChildProcessStart("dotnet",
            [DiagnoseCli.Path, "watch", "-p", run.Server.ProcessId.ToString(CultureInfo.InvariantCulture), "--timeout", $"{timeout.TotalSeconds:0}s", "--json"])
        {
            WorkingDirectory = RepositoryPaths.Root,
            TimeLimit = timeout + Patience,

            // Each second it reads goes to standard error as it is read: from the first, it is watching.
            OnErrorLine = line =>
            {
                if (line.TrimStart().StartsWith("threads ", StringComparison.Ordinal))
                {
                    reading.TrySetResult();
                }
            },
        });
        try
        {
            await Task.WhenAny(reading.Task, watch.WaitForExitAsync()).TimeoutAfter(Patience);
            if (!reading.Task.IsCompleted)
            {
                throw new InvalidOperationException($"watch ended before it read a second: {await watch.WaitForExitAsync()}");
            }
        }
        catch
        {
            await watch.DisposeAsync();
            throw;
        }

        return new Observation(watch, DateTimeOffset.UtcNow);
    }

    private sealed class Observation(ChildProcess watch, DateTimeOffset reading) : IObservation
    {
        public async Task<object> StopAsync()
        {
            try
            {
                var exit = await watch.WaitForExitAsync().TimeoutAfter(Patience);
                var result = exit.ExitCode is 0 or 3 ? JsonSerializer.Deserialize<WatchResult>(exit.Output, Json) : null;
                return new WatchRecord(exit, result, reading);
            }
            finally
            {
                await watch.DisposeAsync();
            }
        }
    }
}

/// <summary>How the watch ended: its exit code and output, its report, and when it had started reading.</summary>
internal sealed record WatchRecord(ChildProcessResult Exit, WatchResult? Result, DateTimeOffset ReadingFrom);
