using System.Diagnostics.Tracing;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.Common;
using Microsoft.Diagnostics.NETCore.Client;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// A recording whose file cannot be written: <c>/dev/full</c> fails every write as a full disk does (ENOSPC). The session
/// is this test process's own, with the rundown, whose megabytes the runtime writes from its diagnostic-server thread at
/// the stop: a reader that gave up at the first failed write would leave that thread blocked on a stream nobody reads, the
/// stop unanswered, and the failure reported as an unreachable port after the drain timeout.
/// </summary>
public sealed class UnwritableTraceTests
{
    private const string FullDisk = "/dev/full";

    private static readonly IReadOnlyList<EventPipeProvider> Runtime = [new("Microsoft-Windows-DotNETRuntime", EventLevel.Informational, keywords: 0)];

    [LinuxFact]
    public async Task Record_ToAFullDisk_FailsNamingTheFileAndTheCause_OnceTheStopWasAnswered()
    {
        // Patience enough for a rundown of this process many times over; a stop that is never answered uses it all.
        var options = DiagnosisOptions.Default with { DrainTimeout = TimeSpan.FromSeconds(20) };

        var failure = await Assert.ThrowsAsync<DiagnosisException>(
            () => Task.Run(() => EventPipeRecorder.Record(Environment.ProcessId, Runtime, whileOn: _ => { }, FullDisk, options, rundown: true))
                .TimeoutAfter(options.DrainTimeout * 3));

        // Not PortUnreachable: the stop was answered and the reader reached the stream's end before this was thrown.
        Assert.True(failure.Failure == DiagnosisFailure.TraceNotWritten, $"{failure.Failure}: {failure.Message}");
        Assert.Contains(FullDisk, failure.Message, StringComparison.Ordinal);
        Assert.Contains("No space left on device", failure.Message, StringComparison.Ordinal);
    }
}
