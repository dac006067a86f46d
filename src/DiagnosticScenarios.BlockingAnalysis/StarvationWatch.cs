using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Globalization;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Waits for starvation in any .NET process and names the code: it reads the runtime's <c>System.Runtime</c> meter over
/// EventPipe once a second, as dotnet-counters does (thread count, queue length, completed work items, CPU), applies
/// <see cref="StarvationRule"/> (the rule of the app's own detector and of the shipped alert), and at the first starved
/// verdict takes a stack snapshot while the pool is still starved. ASP.NET Core's hosting events, read all along, name the
/// request each parked thread last started, for sites whose frames a Release build's JIT inlined away.
/// </summary>
public static class StarvationWatch
{
    private const string MetricsProvider = "System.Diagnostics.Metrics";
    private const long TimeSeriesValues = 0x2;
    private const string RuntimeMeter = "System.Runtime";
    private const string Threads = "dotnet.thread_pool.thread.count";
    private const string QueueLength = "dotnet.thread_pool.queue.length";
    private const string WorkItems = "dotnet.thread_pool.work_item.count";
    private const string CpuTime = "dotnet.process.cpu.time";
    private const string Processors = "dotnet.process.cpu.count";

    // Collections a second apart with no complete second among them before the watch says the counters cannot be read: the
    // first has no rates, so a process that has the meter completes the second.
    private const int CollectionsBeforeUnreadable = 5;

    private static readonly string[] Instruments = [Threads, QueueLength, WorkItems, CpuTime, Processors];

    /// <summary>Watches <paramref name="processId"/> until the rule declares starvation or <paramref name="timeout"/> passes. Synchronous; needs no pool thread.</summary>
    /// <param name="onSecond">Each second as read, with the rule's verdict; on the listener's own thread.</param>
    /// <param name="onWatching">Once the session is on, before the first second is read (two collections later: the first has no rates).</param>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, its diagnostic port did not answer, it exited before starvation came, or its counters cannot be read (no <c>System.Runtime</c> meter before .NET 9, or the runtime refused the metrics session).</exception>
    public static WatchResult Run(int processId, TimeSpan timeout, Action<PoolSecond, StarvationVerdict>? onSecond = null, StarvationRule? rule = null, DiagnosisOptions? options = null, Action? onWatching = null)
    {
        rule ??= StarvationRule.Default;
        options ??= DiagnosisOptions.Default;
        var sessionId = Guid.NewGuid().ToString();
        EventPipeProvider[] providers =
        [
            new EventPipeProvider(MetricsProvider, EventLevel.Informational, TimeSeriesValues, new Dictionary<string, string>
            {
                ["SessionId"] = sessionId,
                ["Metrics"] = RuntimeMeter,
                ["RefreshInterval"] = "1",
                ["MaxTimeSeries"] = "1000",
                ["MaxHistograms"] = "10",
            }),
            .. RequestEvents.Providers,
        ];

        var reading = new CounterReading(sessionId, rule, onSecond);
        var started = Stopwatch.StartNew();
        StackSnapshot? snapshot = null;
        var trace = ScratchFiles.NewPath($"watch-{processId}", ".nettrace");
        try
        {
            EventPipeRecorder.Listen(processId, providers, reading.OnEvent, ended =>
            {
                onWatching?.Invoke();
                // Starvation, the timeout, or the process's end (the session then says it exited).
                // A wait takes at most int.MaxValue milliseconds (24.8 days); a longer --timeout waits in turns.
                var deadline = Stopwatch.StartNew();
                int woken;
                do
                {
                    var left = timeout - deadline.Elapsed;
                    woken = WaitHandle.WaitAny([reading.Starved.WaitHandle, reading.Unreadable.WaitHandle, ended], TimeSpan.FromTicks(Math.Clamp(left.Ticks, 0, MaxWait.Ticks)));
                }
                while (woken == WaitHandle.WaitTimeout && deadline.Elapsed < timeout);

                if (woken == 0)
                {
                    // While the pool is still starved, and before the listening session ends: the threads are where they
                    // block, and the endpoint log still arrives for those whose frames the JIT inlined away.
                    StackSnapshots.Record(processId, trace, options);
                    snapshot = StackSnapshots.Analyze(trace, options, (unnamed, instant) => reading.Requests.LabelsOnceNamed(unnamed, instant, RequestsPatience, ended))
                        with { ProcessId = processId };
                }
            }, options);

            if (reading.Unreadable.IsSet && !reading.Starved.IsSet)
            {
                throw new DiagnosisException($"Cannot watch process {processId}: {reading.UnreadableReason}");
            }
        }
        finally
        {
            File.Delete(trace);
        }

        return new WatchResult(processId, snapshot is not null, Math.Round(started.Elapsed.TotalSeconds, 1), reading.LastVerdict, reading.Seconds, snapshot);
    }

    // How long, at the moment of starvation, the endpoint log is read on for sites whose frames the JIT inlined away.
    private static readonly TimeSpan RequestsPatience = TimeSpan.FromSeconds(1);

    // The longest one wait for a handle may take.
    private static readonly TimeSpan MaxWait = TimeSpan.FromMilliseconds(int.MaxValue);

    /// <summary>
    /// The seconds between a collection's start and end as the event carries them, or 1 when it carries no interval
    /// (this had read strings only, and every interval counted as a second).
    /// </summary>
    internal static double IntervalSeconds(object? start, object? end) =>
        Time(start) is { } from && Time(end) is { } to && to > from ? (to - from).TotalSeconds : 1;

    private static DateTime? Time(object? value) => value switch
    {
        DateTime time => time,
        string text when DateTime.TryParse(text, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind, out var parsed) => parsed,
        _ => null,
    };

    /// <summary>Why the counters cannot be read when <paramref name="collections"/> collections came without every instrument the rule reads.</summary>
    internal static string NotPublished(IEnumerable<string> published, int collections)
    {
        var missing = Instruments.Except(published, StringComparer.Ordinal).ToList();
        return string.Create(CultureInfo.InvariantCulture,
            $"{collections} collections a second apart brought no {string.Join(", ", missing)} from its {RuntimeMeter} meter, which the runtime has from .NET 9: a process on an earlier runtime cannot be watched (dotnet-blocking stacks still names its blocking code).");
    }

    /// <summary>The counters as they arrive: one collection a second, between its CollectionStart and CollectionStop events.</summary>
    private sealed class CounterReading(string sessionId, StarvationRule rule, Action<PoolSecond, StarvationVerdict>? onSecond)
    {
        private readonly Dictionary<string, double> _values = new(StringComparer.Ordinal);
        private readonly List<PoolSecond> _seconds = [];
        private readonly Lock _lock = new();
        private double _intervalSeconds = 1;
        private int _collections;

        public ManualResetEventSlim Starved { get; } = new();

        /// <summary>Set when the counters cannot be read, with <see cref="UnreadableReason"/>: waiting longer would only end in a timeout that blames the process.</summary>
        public ManualResetEventSlim Unreadable { get; } = new();

        public string? UnreadableReason { get; private set; }

        public StarvationVerdict LastVerdict { get; private set; } = new(false, "no second read yet");

        public IReadOnlyList<PoolSecond> Seconds
        {
            get
            {
                lock (_lock)
                {
                    return [.. _seconds];
                }
            }
        }

        /// <summary>The requests and endpoints read while watching.</summary>
        public RequestListener Requests { get; } = new("while watching");

        public void OnEvent(TraceEvent data)
        {
            if (data.ProviderName is RequestEvents.HostingProvider or RequestEvents.LoggingProvider)
            {
                Requests.OnEvent(data);
                return;
            }

            if (data.ProviderName != MetricsProvider)
            {
                return;
            }

            // The runtime serves one such session at a time and names the one it keeps: when that is another's (as
            // dotnet-counters reads it), this one gets nothing; when it is this one, a later tool was refused, not this.
            if (data.EventName == "MultipleSessionsNotSupportedError")
            {
                if (data.PayloadByName("runningSessionId") as string != sessionId)
                {
                    Fail("another tool (dotnet-counters, dotnet-monitor, an agent) already reads its metrics, and the runtime serves one such session at a time; stop it and watch again.");
                }

                return;
            }

            if (data.PayloadByName("sessionId") as string != sessionId)
            {
                return;
            }

            // TraceEvent names an event with a task and an opcode by both: CollectionStart is "Collection/Start".
            switch (data.EventName)
            {
                case "Collection/Start" or "CollectionStart":
                    _values.Clear();
                    _intervalSeconds = Interval(data);
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
                if (_collections >= CollectionsBeforeUnreadable && Seconds.Count == 0)
                {
                    Fail(NotPublished(_values.Keys, _collections));
                }

                return;
            }

            var second = new PoolSecond((int)threads, (long)queue, completed / _intervalSeconds, Math.Round(100 * cpuSeconds / (_intervalSeconds * Math.Max(1, processors)), 1));
            StarvationVerdict verdict;
            lock (_lock)
            {
                _seconds.Add(second);
                verdict = rule.Evaluate(_seconds);
                LastVerdict = verdict;
            }

            onSecond?.Invoke(second, verdict);
            if (verdict.Starved)
            {
                Starved.Set();
            }
        }

        private void Fail(string reason)
        {
            UnreadableReason ??= reason;
            Unreadable.Set();
        }

        // The collection's own interval: longer than a second when a collection ran late (a GC pause, a busy machine), and
        // the counts of that collection are over all of it. TraceEvent hands the times over as DateTime; a string is read too.
        private static double Interval(TraceEvent data) => StarvationWatch.IntervalSeconds(data.PayloadByName("intervalStartTime"), data.PayloadByName("intervalEndTime"));
    }
}

/// <summary>What <see cref="StarvationWatch"/> saw.</summary>
/// <param name="ProcessId">The process watched.</param>
/// <param name="Starved">Whether the rule declared starvation before the timeout.</param>
/// <param name="AfterSeconds">How long the watch ran: until the snapshot was analysed, or the timeout.</param>
/// <param name="Verdict">The rule's last verdict: the evidence, or the condition that kept it from firing.</param>
/// <param name="Seconds">Every second read, oldest first.</param>
/// <param name="Snapshot">The stacks taken at the moment of starvation; null when it never came.</param>
public sealed record WatchResult(int ProcessId, bool Starved, double AfterSeconds, StarvationVerdict Verdict, IReadOnlyList<PoolSecond> Seconds, StackSnapshot? Snapshot);
