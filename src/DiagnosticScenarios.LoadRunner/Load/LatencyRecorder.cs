using System.Diagnostics;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.LoadRunner.Load;

/// <summary>Collects every outcome of a run. One lock: at the rates a 2-core machine can drive it is never contended enough to matter.</summary>
internal sealed class LatencyRecorder
{
    private readonly object _gate = new();
    private readonly List<long> _latencyTicks = [];
    private readonly List<long> _waitedTicks = [];
    private readonly Dictionary<int, long> _statusCodes = [];
    private readonly Dictionary<string, long> _errors = new(StringComparer.Ordinal);
    private readonly Dictionary<int, Bucket> _timeline = [];
    private long _timeouts;
    private long _unfinished;

    public long Completed { get; private set; }
    public long Failures { get; private set; }

    /// <param name="finishedAt">Stopwatch ticks since the run started.</param>
    public void RecordAnswer(int statusCode, long latencyTicks, long finishedAt)
    {
        var failed = statusCode is < 200 or >= 300;
        lock (_gate)
        {
            _latencyTicks.Add(latencyTicks);
            _waitedTicks.Add(latencyTicks);
            _statusCodes[statusCode] = _statusCodes.GetValueOrDefault(statusCode) + 1;
            Completed++;
            if (failed)
            {
                Failures++;
            }

            BucketAt(finishedAt).Add(latencyTicks, failed);
        }
    }

    public void RecordError(string message, long finishedAt)
    {
        lock (_gate)
        {
            _errors[message] = _errors.GetValueOrDefault(message) + 1;
            Failures++;
            BucketAt(finishedAt).AddFailure();
        }
    }

    public void RecordTimeout(long waitedTicks, long finishedAt)
    {
        lock (_gate)
        {
            _timeouts++;
            _waitedTicks.Add(waitedTicks);
            Failures++;
            BucketAt(finishedAt).AddFailure();
        }
    }

    public void RecordUnfinished(long waitedTicks)
    {
        lock (_gate)
        {
            _unfinished++;
            _waitedTicks.Add(waitedTicks);
        }
    }

    public LoadReport ToReport(LoadOptions options, long sent, TimeSpan elapsed)
    {
        lock (_gate)
        {
            var seconds = Math.Max(elapsed.TotalSeconds, 1e-9);
            var lastSecond = _timeline.Count == 0 ? -1 : _timeline.Keys.Max();
            var timeline = Enumerable.Range(0, lastSecond + 1)
                .Select(s => _timeline.TryGetValue(s, out var b) ? b.ToPoint(s) : new TimelinePoint(s, 0, 0, 0, 0))
                .ToList();

            return new LoadReport
            {
                Url = options.Url,
                Connections = options.Connections,
                Rate = options.Rate,
                Elapsed = elapsed,
                Sent = sent,
                Completed = Completed,
                RequestsPerSecond = Completed / seconds,
                Latency = Summarise(_latencyTicks),
                LatencyAtLeast = Summarise(_waitedTicks),
                StatusCodes = new SortedDictionary<int, long>(_statusCodes),
                Errors = new SortedDictionary<string, long>(_errors, StringComparer.Ordinal),
                Timeouts = _timeouts,
                Unfinished = _unfinished,
                Timeline = timeline,
            };
        }
    }

    private Bucket BucketAt(long finishedAt)
    {
        var second = (int)(finishedAt / Stopwatch.Frequency);
        if (!_timeline.TryGetValue(second, out var bucket))
        {
            bucket = new Bucket();
            _timeline[second] = bucket;
        }

        return bucket;
    }

    private static LatencySummary Summarise(List<long> ticks)
    {
        if (ticks.Count == 0)
        {
            return LatencySummary.Empty;
        }

        var ms = ticks.Select(ToMs).Order().ToArray();
        var average = ms.Average();
        var variance = ms.Sum(x => (x - average) * (x - average)) / ms.Length;
        return new LatencySummary(
            average,
            Math.Sqrt(variance),
            ms[0],
            ms[^1],
            Percentile.NearestRank(ms, 0.50),
            Percentile.NearestRank(ms, 0.90),
            Percentile.NearestRank(ms, 0.95),
            Percentile.NearestRank(ms, 0.99));
    }

    internal static double ToMs(long ticks) => ticks * 1000.0 / Stopwatch.Frequency;

    private sealed class Bucket
    {
        private long _answered;
        private long _failures;
        private long _sumTicks;
        private long _maxTicks;

        public void Add(long latencyTicks, bool failed)
        {
            _answered++;
            _sumTicks += latencyTicks;
            _maxTicks = Math.Max(_maxTicks, latencyTicks);
            if (failed)
            {
                _failures++;
            }
        }

        public void AddFailure() => _failures++;

        public TimelinePoint ToPoint(int second) =>
            new(second, _answered, _failures, _answered == 0 ? 0 : ToMs(_sumTicks) / _answered, ToMs(_maxTicks));
    }
}
