namespace DiagnosticScenarios.Common;

/// <summary>
/// The one percentile the app, the load runner and the tests report: nearest rank, the smallest value with at least the
/// given share of the values at or below it. Always a value that was measured, never one interpolated between two.
/// </summary>
public static class Percentile
{
    /// <param name="sorted">The values in ascending order; at least one.</param>
    /// <param name="quantile">The share, from 0 to 1 (0.95 for p95).</param>
    public static double NearestRank(ReadOnlySpan<double> sorted, double quantile)
    {
        if (sorted.IsEmpty)
        {
            throw new ArgumentException("A percentile of no values is undefined.", nameof(sorted));
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(quantile, 0);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(quantile, 1);
        return sorted[Math.Clamp((int)Math.Ceiling(quantile * sorted.Length) - 1, 0, sorted.Length - 1)];
    }
}
