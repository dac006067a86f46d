using System.Diagnostics.Tracing;
using System.Globalization;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The pool's seconds as the runtime's <c>System.Runtime</c> meter publishes them over EventPipe, one collection a second,
/// as dotnet-counters reads them (thread count, queue length, completed work items, CPU): live in <c>watch</c>, or from a
/// trace that recorded them beside a load.
/// </summary>
internal sealed class RuntimeCounters
{
    private const string MetricsProvider = "System.Diagnostics.Metrics";
    private const long TimeSeriesValues = 0x2;
    private const string RuntimeMeter = "System.Runtime";
    private const string Threads = "dotnet.thread_pool.thread.count";
    private const string QueueLength = "dotnet.thread_pool.queue.length";
    private const string WorkItems = "dotnet.thread_pool.work_item.count";
    private const string CpuTime = "dotnet.process.cpu.time";
    private const string Processors = "dotnet.process.cpu.count";

    // Collections a second apart with no complete second among them before the counters are said unreadable: the first
    // has no rates, so a process that has the meter completes the second.
    private const int CollectionsBeforeUnreadable = 5;

    private static readonly string[] Instruments = [Threads, QueueLength, WorkItems, CpuTime, Processors];

    private readonly string? _sessionId;
    private readonly Action<PoolSecond>? _onSecond;
    private readonly Dictionary<string, double> _values = new(StringComparer.Ordinal);
    private readonly List<PoolSecond> _seconds = [];
    private double _intervalSeconds = 1;
    private int _collections;

    /// <param name="sessionId">The session whose collections count; null for whichever a trace holds.</param>
    /// <param name="onSecond">Each second as it is read, on the reader's thread.</param>
    public RuntimeCounters(string? sessionId, Action<PoolSecond>? onSecond = null) => (_sessionId, _onSecond) = (sessionId, onSecond);

    /// <summary>The provider that publishes the meter once a second, for the session named <paramref name="sessionId"/>.</summary>
    public static EventPipeProvider Provider(string sessionId) => new(MetricsProvider, EventLevel.Informational, TimeSeriesValues, new Dictionary<string, string>
    {
        ["SessionId"] = sessionId,
        ["Metrics"] = RuntimeMeter,
        ["RefreshInterval"] = "1",
        ["MaxTimeSeries"] = "1000",
        ["MaxHistograms"] = "10",
    });

    /// <summary>Every second read so far, oldest first. Not thread-safe: read it from the reader's thread, or after the reading.</summary>
    public IReadOnlyList<PoolSecond> Seconds => _seconds;

    /// <summary>Why the counters cannot be read, once that is known; null while they can.</summary>
    public string? Unreadable { get; private set; }

    public void OnEvent(TraceEvent data)
    {
        if (data.ProviderName != MetricsProvider)
        {
            return;
        }

        // The runtime serves one such session at a time and names the one it keeps: when that is another's (as
        // dotnet-counters reads it), this one gets nothing; when it is this one, a later tool was refused, not this.
        if (data.EventName == "MultipleSessionsNotSupportedError")
        {
            if (_sessionId is not null && data.PayloadByName("runningSessionId") as string != _sessionId)
            {
                Fail("another tool (dotnet-counters, dotnet-monitor, an agent) already reads its metrics, and the runtime serves one such session at a time; stop it and watch again.");
            }

            return;
        }

        if (_sessionId is not null && data.PayloadByName("sessionId") as string != _sessionId)
        {
            return;
        }

        // TraceEvent names an event with a task and an opcode by both: CollectionStart is "Collection/Start".
        switch (data.EventName)
        {
            case "Collection/Start" or "CollectionStart":
                _values.Clear();
                _intervalSeconds = IntervalSeconds(data.PayloadByName("intervalStartTime"), data.PayloadByName("intervalEndTime"));
                break;
            case "CounterRateValuePublished" or "UpDownCounterRateValuePublished" when data.PayloadByName("meterName") as string == RuntimeMeter:
                // Each carries the value now and its change over the interval ("rate"): counts of things done want the change.
                Add(data, data.PayloadByName("instrumentName") is WorkItems or CpuTime ? "rate" : "value");
                break;
            case "GaugeValuePublished" when data.PayloadByName("meterName") as string == RuntimeMeter:
                Add(data, "lastValue");
                break;
            case "Collection/Stop" or "CollectionStop":
                Collected();
                break;
            case "Error":
                Fail($"its metrics session failed: {data.PayloadByName("errorMessage")}");
                break;
        }
    }

    /// <summary>
    /// The seconds between a collection's start and end as the event carries them (DateTime or string), or 1 when it carries
    /// no interval.
    /// </summary>
    internal static double IntervalSeconds(object? start, object? end) =>
        Time(start) is { } from && Time(end) is { } to && to > from ? (to - from).TotalSeconds : 1;

    /// <summary>Why the counters cannot be read when <paramref name="collections"/> collections came without every instrument the rule reads.</summary>
    internal static string NotPublished(IEnumerable<string> published, int collections)
    {
        var missing = Instruments.Except(published, StringComparer.Ordinal).ToList();
        return string.Create(CultureInfo.InvariantCulture,
            $"{collections} collections a second apart brought no {string.Join(", ", missing)} from its {RuntimeMeter} meter, which the runtime has from .NET 9: a process on an earlier runtime cannot be watched (dotnet-blocking stacks still names its blocking code).");
    }

    private static DateTime? Time(object? value) => value switch
    {
        DateTime time => time,
        string text when DateTime.TryParse(text, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind, out var parsed) => parsed,
        _ => null,
    };

    // dotnet.process.cpu.time comes once per cpu.mode (user, system): summed.
    private void Add(TraceEvent data, string field)
    {
        if (data.PayloadByName("instrumentName") is string instrument
            && data.PayloadByName(field) is string text
            && double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value))
        {
            _values[instrument] = _values.GetValueOrDefault(instrument) + value;
        }
    }

    private void Collected()
    {
        _collections++;
        if (!_values.TryGetValue(Threads, out var threads)
            || !_values.TryGetValue(QueueLength, out var queue)
            || !_values.TryGetValue(WorkItems, out var completed)
            || !_values.TryGetValue(CpuTime, out var cpuSeconds)
            || !_values.TryGetValue(Processors, out var processors))
        {
            // The first collection has no rates yet; a process without the meter never completes one.
            if (_collections >= CollectionsBeforeUnreadable && _seconds.Count == 0)
            {
                Fail(NotPublished(_values.Keys, _collections));
            }

            return;
        }

        var second = new PoolSecond((int)threads, (long)queue, completed / _intervalSeconds, Math.Round(100 * cpuSeconds / (_intervalSeconds * Math.Max(1, processors)), 1));
        _seconds.Add(second);
        _onSecond?.Invoke(second);
    }

    private void Fail(string reason) => Unreadable ??= reason;
}
