namespace DiagnosticScenarios.LoadRunner.Load;

/// <summary>The outcome of one load run, in the shape of bombardier's summary, plus a per-second timeline for charts.</summary>
public sealed record LoadReport
{
    public required Uri Url { get; init; }
    public required int Connections { get; init; }
    public double? Rate { get; init; }

    /// <summary>From the first send to the last answer (or the end of the drain).</summary>
    public required TimeSpan Elapsed { get; init; }

    /// <summary>Requests sent.</summary>
    public required long Sent { get; init; }

    /// <summary>Requests answered with any status code.</summary>
    public required long Completed { get; init; }

    /// <summary>Answered requests per second of <see cref="Elapsed"/>.</summary>
    public required double RequestsPerSecond { get; init; }

    /// <summary>Latency of answered requests, in milliseconds.</summary>
    public required LatencySummary Latency { get; init; }

    /// <summary>
    /// Latency of every request that got an answer or ran out of time, in milliseconds: timed-out and unfinished requests count
    /// with how long they had waited when given up, a lower bound. Unlike <see cref="Latency"/> it cannot look better because
    /// the slowest requests never finished.
    /// </summary>
    public required LatencySummary LatencyAtLeast { get; init; }

    /// <summary>Answers by HTTP status code.</summary>
    public required IReadOnlyDictionary<int, long> StatusCodes { get; init; }

    /// <summary>Requests that failed without an answer (refused, reset, ...), by message.</summary>
    public required IReadOnlyDictionary<string, long> Errors { get; init; }

    /// <summary>Requests unanswered after <see cref="LoadOptions.Timeout"/>.</summary>
    public required long Timeouts { get; init; }

    /// <summary>Requests still in flight when the run stopped without draining; neither answered nor failed.</summary>
    public required long Unfinished { get; init; }

    /// <summary>One point per second of the run, by the second the request finished in.</summary>
    public required IReadOnlyList<TimelinePoint> Timeline { get; init; }

    /// <summary>Answers with a 2xx status code.</summary>
    public long Successes => StatusCodes.Where(s => s.Key is >= 200 and < 300).Sum(s => s.Value);

    /// <summary>Everything that is not a 2xx answer: other status codes, errors and timeouts.</summary>
    public long Failures => Completed - Successes + Errors.Values.Sum() + Timeouts;
}

/// <summary>Latency statistics in milliseconds; all zero when nothing was answered.</summary>
public sealed record LatencySummary(double Average, double StandardDeviation, double Min, double Max, double P50, double P90, double P95, double P99)
{
    public static readonly LatencySummary Empty = new(0, 0, 0, 0, 0, 0, 0, 0);
}

/// <summary>One second of a run: answers that finished in it and their latency in milliseconds.</summary>
public sealed record TimelinePoint(int Second, long Completed, long Failures, double AverageMs, double MaxMs);

/// <summary>A progress snapshot, reported once per <see cref="LoadOptions.ProgressInterval"/>.</summary>
public sealed record LoadProgress(TimeSpan Elapsed, long Sent, long Completed, long Failures, long InFlight, double RequestsPerSecondLastInterval);
