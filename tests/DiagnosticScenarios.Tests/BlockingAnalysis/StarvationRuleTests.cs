using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// The starvation rule the app's detector and <c>watch</c> apply, on the cases <c>monitoring/alerts.test.yml</c> gives the
/// shipped alert (which promtool checks): every input at the tutorial's signature but one, moved across its threshold.
/// </summary>
public sealed class StarvationRuleTests
{
    private static readonly StarvationRule Rule = StarvationRule.Default;

    // The alert tests' starved series: queue 50 and growing by 5, 5 completions a second, 12.5 % CPU, threads 2 and up by 2.
    private static PoolSecond Starved(int second) => new(2 + (2 * second), 50 + (5 * second), 5, 12.5);

    private static PoolSecond[] Seconds(int count, Func<int, PoolSecond> at) => [.. Enumerable.Range(0, count).Select(at)];

    [Fact]
    public void Fires_OnceEveryConditionHasHeldForTheWholeWindow_AndNotBefore()
    {
        Assert.False(Rule.Evaluate(Seconds(Rule.WindowSeconds - 1, Starved)).Starved);
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, Starved));

        Assert.True(verdict.Starved, verdict.Reason);
        Assert.Contains("threads 2 → 6", verdict.Reason, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(10, true)]
    [InlineData(9, false)]
    public void QueueLength_TenQueuedItemsAreEnough_NineAreNot(long queue, bool starved)
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => Starved(s) with { QueueLength = queue, CompletedPerSecond = 1 }));

        Assert.True(verdict.Starved == starved, verdict.Reason);
        Assert.True(starved || verdict.Reason.StartsWith($"the queue is under {Rule.MinQueueLength}", StringComparison.Ordinal), verdict.Reason);
    }

    [Theory]
    [InlineData(50, false)] // 50 queued, 50 completed a second: one second of work, enough
    [InlineData(60, true)] // 50 queued, 60 completed a second: drained within the second, traffic
    public void QueuedWork_AQueueThePoolDrainsWithinASecond_IsTraffic(double completedPerSecond, bool drains)
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => Starved(s) with { QueueLength = 50, CompletedPerSecond = completedPerSecond }));

        Assert.True(verdict.Starved == !drains, verdict.Reason);
        Assert.True(!drains || verdict.Reason.StartsWith("the queue drains within 1 s", StringComparison.Ordinal), verdict.Reason);
    }

    [Fact]
    public void QueuedWork_NothingCompletingAtAll_IsStarvation()
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => Starved(s) with { CompletedPerSecond = 0 }));

        Assert.True(verdict.Starved, verdict.Reason);
    }

    [Theory]
    [InlineData(79.9, true)]
    [InlineData(80, false)]
    public void Cpu_AtEightyPercentALongQueueIsSaturation(double cpuPercent, bool starved)
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => Starved(s) with { CpuPercent = cpuPercent }));

        Assert.True(verdict.Starved == starved, verdict.Reason);
        Assert.True(starved || verdict.Reason.StartsWith("the CPU is at 80% or more", StringComparison.Ordinal), verdict.Reason);
    }

    [Fact]
    public void Threads_ThatDoNotClimb_AreNotStarvation()
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => Starved(s) with { ThreadCount = 12 }));

        Assert.False(verdict.Starved, verdict.Reason);
        Assert.StartsWith("the thread count is not climbing", verdict.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void OneShortSecond_BreaksTheWindowUntilItHasLeftIt()
    {
        // As the alert's case: starved from 0 s, the queue down to 5 at 8 s; the verdict of each second reads the seconds up to it.
        var seconds = Seconds(15, s => s == 8 ? Starved(s) with { QueueLength = 5 } : Starved(s));
        var verdicts = Enumerable.Range(1, seconds.Length).Select(n => Rule.Evaluate(seconds[..n]).Starved).ToArray();

        // Seconds 2–7 close a starved window, 8–10 hold the short second, 11 on are starved again.
        Assert.Equal(
            [false, false, true, true, true, true, true, true, false, false, false, true, true, true, true],
            verdicts);
    }

    [Fact]
    public void ABurstOfTwoStarvedSeconds_ThePoolAbsorbs_NeverFills_TheWindow()
    {
        var seconds = Seconds(8, s => s is 2 or 3 ? Starved(s) : new PoolSecond(4, 0, 200, 5));

        Assert.All(Enumerable.Range(1, seconds.Length), n => Assert.False(Rule.Evaluate(seconds[..n]).Starved));
    }
}
