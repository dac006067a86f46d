using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.DotnetBlocking;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// The diagnosis CLI's <c>watch</c> on the run's server, started before the load as a user starts it on a healthy app:
/// it reads the runtime's counters over EventPipe until the starvation rule fires (then names the blocking code) or its
/// timeout, a few seconds past the load, passes.
/// </summary>
internal sealed class WatchObserver : IRunObserver
{
    // Past the load's end: the watch's timeout counts from its session's start, before the other observers have attached
    // and the page has started the load (a few seconds), so a quiet watch still reads when the load ends.
    private static readonly TimeSpan PastTheLoad = TimeSpan.FromSeconds(6);
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    public string Name => "dotnet-blocking watch";

    public async Task<IObservation> AttachAsync(RunContext run)
    {
        var watch = await DiagnoseCli.StartWatchingAsync(run.Server.ProcessId, TimeSpan.FromSeconds(run.Plan.LoadSeconds) + PastTheLoad);
        return new Observation(watch, DateTimeOffset.UtcNow);
    }

    private sealed class Observation(ChildProcess watch, DateTimeOffset watching) : IObservation
    {
        public async Task<object> StopAsync()
        {
            try
            {
                var exit = await watch.WaitForExitAsync().TimeoutAfter(Patience);
                var result = exit.ExitCode is 0 or 3 ? JsonSerializer.Deserialize<WatchResult>(exit.Output, Json) : null;
                return new WatchRecord(exit, result, watching);
            }
            finally
            {
                await watch.DisposeAsync();
            }
        }
    }
}

/// <summary>How the watch ended: its exit code and output, its report, and when its session was on (its seconds count from just before).</summary>
internal sealed record WatchRecord(ChildProcessResult Exit, WatchResult? Result, DateTimeOffset WatchingFrom);
