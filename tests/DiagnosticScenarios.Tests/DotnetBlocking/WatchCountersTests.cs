using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// A process whose runtime has no <c>System.Runtime</c> meter (before .NET 9) publishes none of the instruments the rule
/// reads; <c>watch</c> says so after a few seconds instead of waiting out its timeout and reporting no starvation.
/// </summary>
public sealed class WatchCountersTests
{
    [Fact]
    public void NotPublished_NamesEachInstrumentTheRuleReadsThatNeverCame_AndTheRuntimeThatHasThem()
    {
        var reason = RuntimeCounters.NotPublished(["dotnet.thread_pool.thread.count", "dotnet.gc.collections"], collections: 5);

        Assert.StartsWith("5 collections a second apart brought no dotnet.thread_pool.queue.length, dotnet.thread_pool.work_item.count, dotnet.process.cpu.time, dotnet.process.cpu.count from its System.Runtime meter", reason, StringComparison.Ordinal);
        Assert.Contains(".NET 9", reason, StringComparison.Ordinal);
    }

    // A collection that ran late covers more than a second, and its counts with it: TraceEvent hands the interval's ends
    // over as DateTime, not strings, and an interval read as one second would inflate the rates.
    [Fact]
    public void IntervalSeconds_ReadsTheCollectionsOwnInterval_AsTraceEventHandsItOver()
    {
        var start = new DateTime(2026, 12, 7, 0, 7, 34, DateTimeKind.Utc);

        Assert.Equal(2.5, RuntimeCounters.IntervalSeconds(start, start.AddSeconds(2.5)));
        Assert.Equal(2.5, RuntimeCounters.IntervalSeconds(start.ToString("O"), start.AddSeconds(2.5).ToString("O")));
        Assert.Equal(1, RuntimeCounters.IntervalSeconds(null, null));
    }
}
