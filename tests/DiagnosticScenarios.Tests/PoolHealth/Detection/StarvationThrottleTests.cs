using DiagnosticScenarios.PoolHealth.Detection;

namespace DiagnosticScenarios.Tests.PoolHealth.Detection;

/// <summary>The detector's one throttle, second by second: which starved seconds raise the event.</summary>
public sealed class StarvationThrottleTests
{
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(10);

    /// <summary>The seconds, of <paramref name="starved"/>, on which a throttle with the default interval raises the event.</summary>
    private static int[] Raised(Func<int, bool> starved, int seconds)
    {
        var throttle = new StarvationThrottle(Interval);
        return [.. Enumerable.Range(0, seconds).Where(second => throttle.Raises(starved(second), TimeSpan.FromSeconds(second)))];
    }

    [Fact]
    public void LastingStarvation_RaisesAtItsFirstSecond_ThenOncePerInterval() =>
        Assert.Equal([5, 15, 25], Raised(second => second >= 5, 30));

    [Fact]
    public void StarvationThatComesAndGoesEverySecond_RaisesOncePerInterval_NotAtEachOnset() =>
        Assert.Equal([0, 10, 20], Raised(second => second % 2 == 0, 25));

    [Fact]
    public void StarvationAfterAQuietInterval_RaisesAtOnce() =>
        Assert.Equal([0, 17], Raised(second => second is 0 or 1 or 17, 20));

    [Fact]
    public void HealthySeconds_RaiseNothing() =>
        Assert.Empty(Raised(_ => false, 30));
}
