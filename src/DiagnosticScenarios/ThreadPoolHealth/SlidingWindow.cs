using System.Diagnostics;

namespace DiagnosticScenarios.ThreadPoolHealth;

/// <summary>
/// The most recent values within a time window, for percentiles. A fixed ring, so memory stays bounded
/// whatever the request rate; when the ring is full the oldest values drop first.
/// </summary>
internal sealed class SlidingWindow(TimeSpan window, int capacity)
{
    private readonly long[] _timestamps = new long[capacity];
    private readonly double[] _values = new double[capacity];
    private readonly Lock _lock = new();
    private int _next;
    private int _count;

    public TimeSpan Window { get; } = window;

    public void Add(double value)
    {
        var now = Stopwatch.GetTimestamp();
        lock (_lock)
        {
            _timestamps[_next] = now;
            _values[_next] = value;
            _next = (_next + 1) % _values.Length;
            _count = Math.Min(_count + 1, _values.Length);
        }
    }

    public Percentiles Snapshot()
    {
        var oldest = Stopwatch.GetTimestamp() - (long)(Window.TotalSeconds * Stopwatch.Frequency);
        double[] recent;
        lock (_lock)
        {
            recent = new double[_count];
            var n = 0;
            for (var i = 0; i < _count; i++)
            {
                var index = (_next - 1 - i + _values.Length) % _values.Length;
                if (_timestamps[index] < oldest)
                {
                    break;
                }

                recent[n++] = _values[index];
            }

            Array.Resize(ref recent, n);
        }

        return Percentiles.Of(recent);
    }
}

/// <summary>Percentiles of a set of milliseconds (nearest-rank).</summary>
public sealed record Percentiles(int Count, double P50Ms, double P95Ms, double P99Ms, double MaxMs)
{
    public static Percentiles Empty { get; } = new(0, 0, 0, 0, 0);

    public static Percentiles Of(double[] values)
    {
        if (values.Length == 0)
        {
            return Empty;
        }

        Array.Sort(values);
        return new Percentiles(values.Length, Rank(values, 0.50), Rank(values, 0.95), Rank(values, 0.99), Math.Round(values[^1], 1));
    }

    private static double Rank(double[] sorted, double quantile) =>
        Math.Round(sorted[Math.Max(0, (int)Math.Ceiling(quantile * sorted.Length) - 1)], 1);
}
