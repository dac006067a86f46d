using DiagnosticScenarios.Diagnosis;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>
/// A process whose runtime has no <c>System.Runtime</c> meter (before .NET 9) publishes none of the instruments the rule
/// reads; <c>watch</c> says so after a few seconds instead of waiting out its timeout and reporting no starvation.
/// </summary>
public sealed class WatchCountersTests
{
    [Fact]
    public void NotPublished_NamesEachInstrumentTheRuleReadsThatNeverCame_AndTheRuntimeThatHasThem()
    {
        var reason = StarvationWatch.NotPublished(["dotnet.thread_pool.thread.count", "dotnet.gc.collections"], collections: 5);

        Assert.StartsWith("5 collections a second apart brought no dotnet.thread_pool.queue.length, dotnet.thread_pool.work_item.count, dotnet.process.cpu.time, dotnet.process.cpu.count from its System.Runtime meter", reason, StringComparison.Ordinal);
        Assert.Contains(".NET 9", reason, StringComparison.Ordinal);
    }
}
