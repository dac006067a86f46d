using System.Diagnostics;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// The most recent rows of one or more values within a time window, for percentiles. A fixed ring, so memory stays
/// bounded whatever the request rate; when the ring is full the oldest rows drop first. Not synchronised: the owner
/// adds and reads under its own lock, so one lock covers this and whatever else it updates with the same row.
/// </summary>
internal sealed class SlidingWindow(TimeSpan window, int capacity, int columns = 1)
{
    private readonly long _windowTicks = (long)(window.TotalSeconds * Stopwatch.Frequency);
    private readonly long[] _timestamps = new long[capacity];
    private readonly double[] _values = new double[capacity * columns];
    private int _next;
    private int _count;

    public void Add(long timestamp, double value) => _values[Row(timestamp)] = value;

    public void Add(long timestamp, double first, double second)
    {
        var row = Row(timestamp);
        _values[row] = first;
        _values[row + 1] = second;
    }

    /// <summary>The values of one column within the window before <paramref name="now"/>, newest first.</summary>
    public double[] Recent(long now, int column = 0)
    {
        var oldest = now - _windowTicks;
        var recent = new double[_count];
        var n = 0;
        for (var i = 0; i < _count; i++)
        {
            var index = (_next - 1 - i + capacity) % capacity;
            if (_timestamps[index] < oldest)
            {
                break;
            }

            recent[n++] = _values[(index * columns) + column];
        }

        Array.Resize(ref recent, n);
        return recent;
    }

    private int Row(long timestamp)
    {
        var index = _next;
        _timestamps[index] = timestamp;
        _next = (index + 1) % capacity;
        _count = Math.Min(_count + 1, capacity);
        return index * columns;
    }
}

/// <summary>Percentiles of a set of milliseconds (<see cref="Percentile.NearestRank"/>), rounded to a tenth.</summary>
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

    private static double Rank(double[] sorted, double quantile) => Math.Round(Percentile.NearestRank(sorted, quantile), 1);
}
