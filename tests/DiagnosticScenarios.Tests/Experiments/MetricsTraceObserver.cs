using System.Globalization;
using DiagnosticScenarios.Common;
using Microsoft.Diagnostics.Tracing;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// A dotnet-trace metrics session on the server, from the repository's tool manifest, recording the app's meter and the
/// runtime's counters while the load is on. dotnet-counters is not in this package source; dotnet-trace reads the same
/// System.Diagnostics.Metrics event source over EventPipe, and its file is read with TraceEvent, as PerfView would.
/// </summary>
internal sealed class MetricsTraceObserver : IRunObserver
{
    // Long enough for several one-second intervals with the load's requests in them; it ends by itself.
    private static readonly TimeSpan Duration = TimeSpan.FromSeconds(8);
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    public string Name => "dotnet-trace metrics session";

    public async Task<IObservation> AttachAsync(RunContext run)
    {
        var output = Path.Combine(Path.GetTempPath(), $"diagnosticscenarios-metrics-{Guid.NewGuid():N}.nettrace");
        var recording = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var trace = await DotnetTools.StartAsync("dotnet-trace",
            [
                "collect", "-p", run.Server.ProcessId.ToString(CultureInfo.InvariantCulture),
                "--providers", "System.Diagnostics.Metrics:0x2:4:Metrics=DiagnosticScenarios\\nSystem.Runtime;RefreshInterval=1",
                "--duration", $"00:00:00:{Duration.TotalSeconds:00}", "-o", output,
            ],
            // dotnet-trace names its output file once its session is open: from then on it records.
            line =>
            {
                if (line.StartsWith("Output File", StringComparison.Ordinal))
                {
                    recording.TrySetResult();
                }
            },
            Patience);
        await trace.WhenReadyAsync(recording.Task, Patience, "dotnet-trace ended before recording");
        return new Observation(trace, output);
    }

    private sealed class Observation(ChildProcess trace, string output) : IObservation
    {
        public async Task<object> StopAsync()
        {
            try
            {
                var exit = await trace.WaitForExitAsync().TimeoutAfter(Patience);
                if (exit.ExitCode != 0)
                {
                    throw new InvalidOperationException(exit.ToString());
                }

                return new MetricsTraceRecord(await Task.Run(() => PublishedValues(output)).TimeoutAfter(Patience));
            }
            finally
            {
                await trace.DisposeAsync();
                File.Delete(output);
            }
        }
    }

    /// <summary>
    /// The values the System.Diagnostics.Metrics event source published in a trace, as dotnet-counters reads them: each
    /// event names the meter, the instrument, its unit and tags, and carries the quantiles of a histogram or the value of
    /// a counter or gauge.
    /// </summary>
    private static List<PublishedValue> PublishedValues(string nettrace)
    {
        var published = new List<PublishedValue>();
        using var source = new EventPipeEventSource(nettrace);
        source.Dynamic.All += e =>
        {
            if (e.ProviderName == "System.Diagnostics.Metrics" && e.EventName.EndsWith("ValuePublished", StringComparison.Ordinal))
            {
                var value = e.PayloadByName("quantiles") ?? e.PayloadByName("value") ?? e.PayloadByName("lastValue");
                published.Add(new PublishedValue(
                    (string)e.PayloadByName("meterName"), (string)e.PayloadByName("instrumentName"), (string)e.PayloadByName("unit"), (string)e.PayloadByName("tags"),
                    Convert.ToString(value, CultureInfo.InvariantCulture) ?? ""));
            }
        };
        source.Process();
        return published;
    }
}

/// <summary>Every value published during the session.</summary>
internal sealed record MetricsTraceRecord(IReadOnlyList<PublishedValue> Values)
{
    /// <summary>The last value of each instrument and tag set (an interval without a recording publishes none), for a failure message.</summary>
    public string Summary => string.Join('\n', Values.GroupBy(p => (p.Meter, p.Instrument, p.Tags)).Select(g => (g.LastOrDefault(p => p.Value.Length > 0) ?? g.Last()).ToString()));
}

/// <summary>One published value of one instrument and tag set.</summary>
internal sealed record PublishedValue(string Meter, string Instrument, string Unit, string Tags, string Value);
