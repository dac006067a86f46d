namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>Lags the runs measured, summarised with the one percentile (<see cref="DiagnosticScenarios.Common.Percentile"/>).</summary>
internal static class Lags
{
    /// <summary>The nearest-rank <paramref name="quantile"/> of <paramref name="values"/>; zero for none.</summary>
    public static TimeSpan Percentile(IEnumerable<TimeSpan> values, double quantile)
    {
        var sorted = values.Select(v => v.TotalMilliseconds).Order().ToArray();
        return sorted.Length == 0 ? TimeSpan.Zero : TimeSpan.FromMilliseconds(DiagnosticScenarios.Common.Percentile.NearestRank(sorted, quantile));
    }

    /// <summary>p50, p95 and max, in milliseconds, for the test output.</summary>
    public static string Describe(IReadOnlyCollection<TimeSpan> values) =>
        FormattableString.Invariant($"p50 {Percentile(values, 0.5).TotalMilliseconds:0} ms, p95 {Percentile(values, 0.95).TotalMilliseconds:0} ms, max {Percentile(values, 1).TotalMilliseconds:0} ms over {values.Count} samples");
}
