using System.Globalization;
using System.Text.Json;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>One observed run, over: the load as the app reported it, the server's log, and each observer's record.</summary>
/// <param name="Plan">The scenario and its load.</param>
/// <param name="LoadStartedBy">How the load was started (the page's button, or the control the button calls).</param>
/// <param name="LoadStartedAt">When the runner started, as the app reports it.</param>
/// <param name="StoppedAt">When the run was declared over and the observers were stopped.</param>
/// <param name="Load">The app's <c>GET /api/threadpool/load</c> once the run was over: the run, its end and its result.</param>
/// <param name="Log">The server's log, one entry a line, each stamped with the server's UTC time.</param>
/// <param name="Records">What each observer handed back.</param>
/// <param name="Failures">Observers that could not attach or stop, or were not attached, and why.</param>
/// <param name="Timings">Where the run's time went, for the test output.</param>
internal sealed record ObservedRun(
    RunPlan Plan,
    string LoadStartedBy,
    DateTimeOffset LoadStartedAt,
    DateTimeOffset StoppedAt,
    JsonElement Load,
    IReadOnlyList<LogLine> Log,
    IReadOnlyList<object> Records,
    IReadOnlyList<string> Failures,
    string Timings)
{
    /// <summary>The record of type <typeparamref name="T"/> (the one <paramref name="which"/> picks), or why there is none.</summary>
    public T Record<T>(Func<T, bool>? which = null)
        where T : class =>
        Records.OfType<T>().SingleOrDefault(r => which?.Invoke(r) ?? true)
        ?? throw new InvalidOperationException($"The {Plan} run has no {typeof(T).Name}. {(Failures.Count == 0 ? "" : string.Join(" ", Failures))}");

    /// <summary>
    /// The samples the app took while the load was on, from the live page's stream (which has every one), but for the
    /// last second's: a sample taken just before the stop may still be on its way to a slower reader.
    /// </summary>
    public IReadOnlyList<StreamArrival> SamplesUnderLoad() =>
    [
        .. Record<StreamRecord>().Arrivals
            .Where(a => a.TakenAt >= LoadStartedAt && a.TakenAt <= StoppedAt - TimeSpan.FromSeconds(1)),
    ];

    /// <summary>How many samples the app took while the load was on, as <see cref="SamplesUnderLoad"/> counts them: one a second.</summary>
    public int SecondsUnderLoad => (int)(StoppedAt - TimeSpan.FromSeconds(1) - LoadStartedAt).TotalSeconds;

    /// <summary>The log lines that contain <paramref name="text"/>.</summary>
    public IReadOnlyList<LogLine> LogLines(string text) => [.. Log.Where(l => l.Text.Contains(text, StringComparison.Ordinal))];

    public override string ToString() => $"{Plan}: load started by {LoadStartedBy} at {LoadStartedAt:HH:mm:ss.fff}, stopped at {StoppedAt:HH:mm:ss.fff}; {Timings}";
}

/// <summary>One line of the server's log and the time the server stamped on it.</summary>
internal sealed record LogLine(DateTimeOffset? At, string Text)
{
    /// <summary>The console logger's timestamp, set by <see cref="Environment"/>: UTC, to the millisecond, then a space.</summary>
    private const string TimestampFormat = "yyyy-MM-dd'T'HH:mm:ss.fff'Z'";

    /// <summary>The server's environment for a log whose every line starts with its UTC time.</summary>
    public static IReadOnlyDictionary<string, string> Environment { get; } = new Dictionary<string, string>
    {
        ["Logging__Console__FormatterOptions__TimestampFormat"] = TimestampFormat + " ",
        ["Logging__Console__FormatterOptions__UseUtcTimestamp"] = "true",
    };

    public static IReadOnlyList<LogLine> Parse(string output) =>
    [
        .. output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(line =>
            line.Length > 25 && DateTimeOffset.TryParseExact(line[..24], TimestampFormat, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out var at)
                ? new LogLine(at, line[25..].TrimEnd('\r'))
                : new LogLine(null, line.TrimEnd('\r'))),
    ];

    public override string ToString() => $"{At:HH:mm:ss.fff} {Text}";
}
