using System.Globalization;
using DiagnosticScenarios.Tests.Load;
using Microsoft.Diagnostics.Tracing;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

/// <summary>
/// The DiagnosticScenarios meter is readable from another process, beside the runtime's thread-pool counters.
/// dotnet-counters is not in this package source, so the check uses the tool manifest's dotnet-trace, which reads
/// the same System.Diagnostics.Metrics event source over EventPipe that dotnet-counters reads, and reads its file with
/// TraceEvent, as PerfView would.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class MetricsFromOutsideTests(ITestOutputHelper testOutput)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(120);

    [Fact]
    public async Task DotnetTrace_ReadsOurMeterAndTheThreadPoolCounters_FromTheRunningApp()
    {
        await using var app = await HealthApp.StartAsync();
        using var client = app.CreateClient();
        var output = Path.Combine(Path.GetTempPath(), $"diagnosticscenarios-metrics-{Guid.NewGuid():N}.nettrace");
        try
        {
            var collect = RunDotnetTraceAsync(
            [
                "collect", "-p", app.ProcessId.ToString(CultureInfo.InvariantCulture),
                "--providers", "System.Diagnostics.Metrics:0x2:4:Metrics=DiagnosticScenarios\\nSystem.Runtime;RefreshInterval=1",
                "--duration", "00:00:00:06", "-o", output,
            ]);
            // Requests for as long as the recording lasts: a histogram publishes only the intervals that had a recording in the
            // session, and the tool takes a moment to start. Twenty requests once ended 1.1 s in, a single interval with values.
            var requests = Task.Run(async () =>
            {
                for (var i = 0; i < 1000 && !collect.IsCompleted; i++)
                {
                    await client.GetStringAsync(new Uri("/api/diagscenario/taskwait?delayMs=50", UriKind.Relative));
                }
            });

            await collect.WaitAsync(Timeout);
            await requests.WaitAsync(Timeout);
            var published = await Task.Run(() => PublishedValues(output)).WaitAsync(Timeout);
            // The last value of each instrument and tag set (an interval without a recording publishes none), for the failure message.
            var summary = string.Join('\n', published.GroupBy(p => (p.Meter, p.Instrument, p.Tags)).Select(g => (g.LastOrDefault(p => p.Value.Length > 0) ?? g.Last()).ToString()));
            testOutput.WriteLine(summary);

            // Published values, not just instrument declarations: our histograms with their quantiles (the hold time per
            // route), and the runtime's thread count with a value.
            Assert.True(published.Any(p => p is { Meter: "DiagnosticScenarios", Instrument: "diagnosticscenarios.threadpool.queue_delay", Unit: "ms", Tags: "" }
                && p.Value.StartsWith("0.5=", StringComparison.Ordinal)), summary);
            Assert.True(published.Any(p => p is { Meter: "DiagnosticScenarios", Instrument: "diagnosticscenarios.http.server.thread_hold_time", Unit: "ms", Tags: "http.route=/api/diagscenario/taskwait" }
                && p.Value.StartsWith("0.5=", StringComparison.Ordinal)), summary);
            Assert.True(published.Any(p => p is { Meter: "System.Runtime", Instrument: "dotnet.thread_pool.thread.count", Unit: "{thread}" }
                && double.TryParse(p.Value, NumberStyles.Float, CultureInfo.InvariantCulture, out var threads) && threads >= 1), summary);
        }
        finally
        {
            File.Delete(output);
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

    private sealed record PublishedValue(string Meter, string Instrument, string Unit, string Tags, string Value);

    private static async Task RunDotnetTraceAsync(string[] arguments)
    {
        var result = await DotnetTools.RunAsync("dotnet-trace", arguments, Timeout);
        if (result.ExitCode != 0)
        {
            throw new InvalidOperationException(result.ToString());
        }
    }
}
