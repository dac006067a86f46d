using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.DotnetBlocking;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// The workshop's wait trace, as a user takes it: once the load has started, dotnet-trace from the repository's tool
/// manifest records the runtime's wait events (<c>--clrevents waithandle --clreventlevel verbose</c>) for a few seconds,
/// and the diagnosis CLI's <c>waits</c> reads the file it wrote.
/// </summary>
internal sealed class WaitsTraceObserver : IRunObserver
{
    // Long enough for the requests of a cold pool's first seconds of starvation to start waiting while it records.
    private static readonly TimeSpan Duration = TimeSpan.FromSeconds(4);
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    public string Name => "dotnet-trace waithandle session and dotnet-blocking waits";

    public Task<IObservation> AttachAsync(RunContext run) => Task.FromResult<IObservation>(new Observation(RecordAsync(run)));

    private static async Task<WaitsTraceRecord> RecordAsync(RunContext run)
    {
        await run.WaitForLoadStartAsync();
        var trace = Path.Combine(Path.GetTempPath(), $"diagnosticscenarios-waits-{Guid.NewGuid():N}.nettrace");
        try
        {
            string[] collect =
            [
                "collect", "-p", run.Server.ProcessId.ToString(CultureInfo.InvariantCulture), "--clrevents", "waithandle", "--clreventlevel", "verbose",
                "--duration", $"00:00:00:{Duration.TotalSeconds:00}", "-o", trace,
            ];
            var collected = await DotnetTools.RunAsync("dotnet-trace", collect, Patience);
            if (collected.ExitCode != 0 || !File.Exists(trace))
            {
                throw new InvalidOperationException($"dotnet-trace {string.Join(' ', collect)} failed: {collected}");
            }

            var read = await DiagnoseCli.RunAsync("waits", trace, "--json");
            if (read.ExitCode != 0)
            {
                throw new InvalidOperationException($"waits {trace} failed: {read}");
            }

            return new WaitsTraceRecord(JsonSerializer.Deserialize<WaitAnalysis>(read.Output, Json)
                ?? throw new InvalidOperationException($"waits --json printed nothing: {read}"));
        }
        finally
        {
            File.Delete(trace);
        }
    }

    private sealed class Observation(Task<WaitsTraceRecord> recording) : IObservation
    {
#pragma warning disable VSTHRD003 // deliberate: this observation's own background work; tests have no SynchronizationContext to deadlock on
        public async Task<object> StopAsync() => await recording.TimeoutAfter(Patience);
#pragma warning restore VSTHRD003
    }
}

/// <summary>The CLI's analysis of the wait trace dotnet-trace wrote during the run.</summary>
internal sealed record WaitsTraceRecord(WaitAnalysis Analysis);
