using System.Globalization;
using System.Text;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>
/// OTLP export when <c>OTEL_EXPORTER_OTLP_ENDPOINT</c> is set, over HTTP/protobuf, to a receiver on threads of its own, in
/// the shared tasksleepwait run. The SDK's periodic reader exports from a thread of its own with a synchronous
/// <c>HttpClient.Send</c>, so the export goes on while the pool starves; over gRPC the SDK sends with
/// <c>SendAsync(...).GetAwaiter().GetResult()</c> and HTTP/2 reads its frames on the pool.
/// </summary>
/// <remarks>
/// Not every second of a long starvation: a send that needs the pool waits for it. .NET's HTTP client needs the pool to
/// open a connection, and its synchronous send needs it again after each idle-connection check, every 15 s
/// (docs/production.md). This run's starved seconds mostly end before the first. Every export's arrival is printed, so a
/// failure shows where the exports stopped.
/// </remarks>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class OtlpExportTests(ObservedRuns runs, ITestOutputHelper output)
{
    [Fact]
    public async Task OtlpExport_ArrivesEverySecond_WhileTaskSleepWaitStarvesThePool()
    {
        var run = await runs.RunAsync(RunPlan.TaskSleepWait);

        var otlp = run.Record<OtlpRecord>();
        // The seconds in which the pool kept work waiting for a thread at least as long as the gap the export may leave
        // (the app's probe measures it each second; the live page's stream has every sample): an export that needed a pool
        // thread would have come that late. Not the detector's verdict, whose signature (threads climbing for three seconds, the
        // CPU low) can come late in the load, long after the queue delay.
        var maxGap = 2 * OtlpObserver.ExportInterval;
        var underLoad = run.SamplesUnderLoad();
        var starved = underLoad.Where(s => s.QueueDelay >= maxGap).ToList();
        var (from, to) = (starved.FirstOrDefault()?.TakenAt, starved.LastOrDefault()?.TakenAt);
        var during = otlp.Arrivals.Where(a => a >= from && a <= to).ToList();
        var gaps = during.Zip(during.Skip(1), (a, b) => (b - a).TotalMilliseconds).ToList();
        var window = (to - from) ?? TimeSpan.Zero;

        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{run}\n{starved.Count} seconds with a queue delay of {maxGap.TotalSeconds:0} s or more, from {from:HH:mm:ss.fff} to {to:HH:mm:ss.fff}; {during.Count} exports in them, gaps {string.Join(" ", gaps.Select(g => $"{g:0}"))} ms; first export {otlp.FirstExport.Length} bytes; every export at {string.Join(" ", otlp.Arrivals.Select(a => $"{a:HH:mm:ss.fff}"))}"));
        output.WriteLine(string.Join('\n', underLoad.Select(s => string.Create(CultureInfo.InvariantCulture,
            $"  {s.TakenAt:HH:mm:ss.fff} queue delay {s.QueueDelay.TotalMilliseconds:0} ms, detector: {s.Starvation}"))));
        // Under tasksleepwait at 125 connections a queued item waits seconds within the load's first seconds: four such
        // seconds at least, or this proves nothing.
        Assert.True(starved.Count >= 4, $"only {starved.Count} seconds under tasksleepwait in which pool work waited {maxGap.TotalSeconds:0} s or more: the pool was not starved long enough for this test to prove anything");
        Assert.True(during.Count >= window.TotalSeconds / OtlpObserver.ExportInterval.TotalSeconds - 1, $"only {during.Count} exports arrived in {window.TotalSeconds:0.0} s of starvation");
        Assert.True(gaps.Max() < maxGap.TotalMilliseconds, $"an export came {gaps.Max():0} ms after the one before it while the pool starved");
        var text = Encoding.UTF8.GetString(otlp.FirstExport);
        // The alert's inputs (threads, queue, completions, CPU), ASP.NET Core's request duration and the app's own meter (its
        // hold time is recorded as requests end, after the first export of a run whose first requests wait in the pool).
        string[] instruments =
        [
            "dotnet.thread_pool.thread.count", "dotnet.thread_pool.queue.length", "dotnet.thread_pool.work_item.count", "dotnet.process.cpu.time",
            "http.server.request.duration", HealthMetrics.QueueDelayInstrument, HealthMetrics.InjectionsInstrument,
        ];
        foreach (var name in instruments)
        {
            Assert.Contains(name, text, StringComparison.Ordinal);
        }
    }
}
