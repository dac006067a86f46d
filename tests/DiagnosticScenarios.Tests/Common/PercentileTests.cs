using DiagnosticScenarios.Common;
using DiagnosticScenarios.PoolHealth.Detection;

namespace DiagnosticScenarios.Tests.Common;

/// <summary>The nearest-rank percentile the app's API and the load runner's reports both use.</summary>
public sealed class PercentileTests
{
    // The textbook nearest-rank example: ranks are ceil(q × 5), so 30 % and 40 % both land on the 2nd value.
    private static readonly double[] Textbook = [15, 20, 35, 40, 50];

    [Theory]
    [InlineData(0.05, 15)]
    [InlineData(0.30, 20)]
    [InlineData(0.40, 20)]
    [InlineData(0.50, 35)]
    [InlineData(0.95, 50)]
    [InlineData(1.00, 50)]
    public void NearestRank_IsTheSmallestValueWithThatShareAtOrBelowIt(double quantile, double expected)
    {
        Assert.Equal(expected, Percentile.NearestRank(Textbook, quantile));
    }

    [Fact]
    public void NearestRank_IsAMeasuredValue_NeverOneInterpolatedBetweenTwo()
    {
        // Interpolation would answer 15 for the median of 10 and 20; nearest rank answers the lower of the two.
        Assert.Equal(10, Percentile.NearestRank([10, 20], 0.5));
    }

    [Fact]
    public void NearestRank_Refuses_NoValues()
    {
        Assert.Throws<ArgumentException>(() => Percentile.NearestRank([], 0.5));
    }

    [Fact]
    public void AppPercentiles_AreTheNearestRanksOfTheValuesGivenInAnyOrder_RoundedToATenth()
    {
        // 1 to 100 shuffled, with the 95th and the 99th a little off a tenth: each quantile lands on a value of its own.
        var values = Enumerable.Range(1, 100).Select(v => v switch { 95 => 95.04, 99 => 99.06, _ => (double)v }).ToArray();
        new Random(7).Shuffle(values);
        var percentiles = Percentiles.Of(values);

        Assert.Equal(new Percentiles(100, P50Ms: 50, P95Ms: 95, P99Ms: 99.1, MaxMs: 100), percentiles);
        Assert.Equal(15, Percentiles.Of([15.04]).P50Ms);
        Assert.Equal(15.1, Percentiles.Of([15.06]).P50Ms);
    }
}
