using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// The starvation rule the app's detector and <c>watch</c> apply, on the cases <c>monitoring/alerts.test.yml</c> gives the
/// shipped alert (which promtool checks): every input at a starved signature but one, moved across its threshold.
/// </summary>
public sealed class StarvationRuleTests
{
    private static readonly StarvationRule Rule = StarvationRule.Default;

    // The alert tests' starved series: queue 50 and growing by 5, 5 completions a second, 12.5 % CPU, threads 2 and up by 2.
    private static PoolSecond Starved(int second) => new(2 + (2 * second), 50 + (5 * second), 5, 12.5);

    // A healthy pool's second: nothing queued, hundreds of items done.
    private static readonly PoolSecond Healthy = new(4, 0, 200, 5);

    private static PoolSecond[] Seconds(int count, Func<int, PoolSecond> at) => [.. Enumerable.Range(0, count).Select(at)];

    [Fact]
    public void Fires_OnceEveryConditionHasHeldForTheWholeWindow_AndNotBefore()
    {
        Assert.False(Rule.Evaluate(Seconds(Rule.WindowSeconds - 1, Starved)).Starved);
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, Starved));

        Assert.True(verdict.Starved, verdict.Reason);
        Assert.Contains("queue 50 55 60", verdict.Reason, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(10, true)]
    [InlineData(9, false)]
    public void QueueLength_TenQueuedItemsOnAverageAreEnough_NineAreNot(long queue, bool starved)
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => Starved(s) with { QueueLength = queue, CompletedPerSecond = 1 }));

        Assert.True(verdict.Starved == starved, verdict.Reason);
        Assert.True(starved || verdict.Reason.StartsWith($"the queue holds under {Rule.MinQueueLength} items on average", StringComparison.Ordinal), verdict.Reason);
    }

    [Theory]
    [InlineData(200, true)] // 50 queued, 200 completed a second: an item waits a quarter of a second, enough
    [InlineData(201, false)] // a little faster: the pool drains its queue, traffic
    public void QueuedWork_AnItemThatWaitsAQuarterOfASecond_IsEnough_OneThatWaitsLessIsNot(double completedPerSecond, bool starved)
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => Starved(s) with { QueueLength = 50, CompletedPerSecond = completedPerSecond }));

        Assert.True(verdict.Starved == starved, verdict.Reason);
        Assert.True(starved || verdict.Reason.StartsWith("a queued item waits under 0.25 s", StringComparison.Ordinal), verdict.Reason);
    }

    [Fact]
    public void QueuedWork_NothingCompletingAtAll_IsStarvation()
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => Starved(s) with { CompletedPerSecond = 0 }));

        Assert.True(verdict.Starved, verdict.Reason);
        Assert.Contains("a queued item waits without end", verdict.Reason, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(79.9, true)]
    [InlineData(80, false)]
    public void Cpu_AtEightyPercentALongQueueIsSaturation(double cpuPercent, bool starved)
    {
        var verdict = Rule.Evaluate(Seconds(Rule.WindowSeconds, s => s == 1 ? Starved(s) with { CpuPercent = cpuPercent } : Starved(s)));

        Assert.True(verdict.Starved == starved, verdict.Reason);
        Assert.True(starved || verdict.Reason.StartsWith("the CPU is at 80% or more", StringComparison.Ordinal), verdict.Reason);
    }

    [Fact]
    public void ALockConvoy_ThreadsSteadyAndWorkCompletingOneByOne_WhileEveryQueuedItemWaits_IsStarvation()
    {
        // The lock pair's shape under 125 connections: twelve threads throughout, the queue dipping and refilling, a few
        // hundred items done a second, each queued item waiting about half a second.
        PoolSecond[] convoy = [new(12, 70, 120, 10), new(12, 4, 150, 8), new(12, 78, 140, 11)];

        var verdict = Rule.Evaluate(convoy);

        Assert.True(verdict.Starved, verdict.Reason);
    }

    [Fact]
    public void AQueueThatEmptiesOnce_BreaksTheWindowUntilItHasLeftIt()
    {
        // As the alert's case: starved from 0 s, the queue empty at 8 s; the verdict of each second reads the seconds up to it.
        var seconds = Seconds(15, s => s == 8 ? Starved(s) with { QueueLength = 0 } : Starved(s));
        var verdicts = Enumerable.Range(1, seconds.Length).Select(n => Rule.Evaluate(seconds[..n]).Starved).ToArray();

        // Seconds 2–7 close a starved window, 8–10 hold the empty second, 11 on are starved again.
        Assert.Equal(
            [false, false, true, true, true, true, true, true, false, false, false, true, true, true, true],
            verdicts);
        Assert.StartsWith("the queue emptied", Rule.Evaluate(seconds[..9]).Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void ABurstOfTwoStarvedSeconds_ThePoolAbsorbs_NeverFills_TheWindow()
    {
        var seconds = Seconds(8, s => s is 2 or 3 ? Starved(s) : Healthy);

        Assert.All(Enumerable.Range(1, seconds.Length), n => Assert.False(Rule.Evaluate(seconds[..n]).Starved));
    }
}
