namespace DiagnosticScenarios.Tests.Observed;

/// <summary>Nearest-rank percentiles of the lags the runs measured.</summary>
internal static class Percentile
{
    /// <summary>The smallest value at least <paramref name="fraction"/> of the values do not exceed.</summary>
    public static TimeSpan Of(IEnumerable<TimeSpan> values, double fraction)
    {
        var sorted = values.Order().ToList();
        return sorted.Count == 0 ? TimeSpan.Zero : sorted[Math.Clamp((int)Math.Ceiling(fraction * sorted.Count) - 1, 0, sorted.Count - 1)];
    }

    /// <summary>p50, p95 and max, in milliseconds, for the test output.</summary>
    public static string Describe(IReadOnlyCollection<TimeSpan> values) =>
        FormattableString.Invariant($"p50 {Of(values, 0.5).TotalMilliseconds:0} ms, p95 {Of(values, 0.95).TotalMilliseconds:0} ms, max {Of(values, 1).TotalMilliseconds:0} ms over {values.Count} samples");
}
