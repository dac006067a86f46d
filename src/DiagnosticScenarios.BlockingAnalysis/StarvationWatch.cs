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
    /// <summary>Watches <paramref name="target"/> until the rule declares starvation or <paramref name="timeout"/> passes. Synchronous; needs no pool thread.</summary>
    /// <param name="onSecond">Each second as read, with the rule's verdict; on the listener's own thread.</param>
    /// <param name="onWatching">Once the session is on, before the first second is read (two collections later: the first has no rates).</param>
    /// <param name="onStarved">At the moment starvation is declared, before the snapshot: where an artifact of that moment (a dump) is taken; what it returns (the dump's path) is the result's <see cref="WatchResult.DumpFile"/>.</param>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, its diagnostic port did not answer, it exited before starvation came, or its counters cannot be read (no <c>System.Runtime</c> meter before .NET 9, or the runtime refused the metrics session).</exception>
    public static WatchResult Run(DiagnosticTarget target, TimeSpan timeout, Action<PoolSecond, StarvationVerdict>? onSecond = null, StarvationRule? rule = null, DiagnosisOptions? options = null, Action? onWatching = null, Func<string>? onStarved = null)
    {
        ArgumentNullException.ThrowIfNull(target);
        rule ??= StarvationRule.Default;
        options ??= DiagnosisOptions.Default;
        var sessionId = Guid.NewGuid().ToString();
        EventPipeProvider[] providers = [RuntimeCounters.Provider(sessionId), .. RequestEvents.Providers];

        var reading = new CounterReading(sessionId, rule, onSecond);
        var started = Stopwatch.StartNew();
        StackSnapshot? snapshot = null;
        string? dumpFile = null;
        var trace = ScratchFiles.NewPath($"watch-{target.FileNamePart}", ".nettrace");
        try
        {
            EventPipeRecorder.Listen(target, providers, reading.OnEvent, ended =>
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
                    dumpFile = onStarved?.Invoke();
                    // While the pool is still starved, and before the listening session ends: the threads are where they
                    // block, and the endpoint log still arrives for those whose frames the JIT inlined away.
                    StackSnapshots.Record(target, trace, options);
                    snapshot = StackSnapshots.Analyze(trace, options, (unnamed, instant) => reading.Requests.LabelsOnceNamed(unnamed, instant, RequestsPatience, ended))
                        with { ProcessId = target.ProcessId ?? 0 };
                }
            }, options);

            if (reading.Unreadable.IsSet && !reading.Starved.IsSet)
            {
                throw new DiagnosisException($"Cannot watch {target.Name}: {reading.UnreadableReason}");
            }
        }
        finally
        {
            File.Delete(trace);
        }

        return new WatchResult(target.ProcessId ?? 0, snapshot is not null, Math.Round(started.Elapsed.TotalSeconds, 1), reading.LastVerdict, reading.Seconds, snapshot) { DumpFile = dumpFile };
    }

    // How long, at the moment of starvation, the endpoint log is read on for sites whose frames the JIT inlined away.
    private static readonly TimeSpan RequestsPatience = TimeSpan.FromSeconds(1);

    // The longest one wait for a handle may take.
    private static readonly TimeSpan MaxWait = TimeSpan.FromMilliseconds(int.MaxValue);

    /// <summary>The counters as they arrive, each second judged by the rule; and the request events read beside them.</summary>
    private sealed class CounterReading
    {
        private readonly StarvationRule _rule;
        private readonly Action<PoolSecond, StarvationVerdict>? _onSecond;
        private readonly RuntimeCounters _counters;
        private readonly Lock _lock = new();

        public CounterReading(string sessionId, StarvationRule rule, Action<PoolSecond, StarvationVerdict>? onSecond)
        {
            (_rule, _onSecond) = (rule, onSecond);
            _counters = new RuntimeCounters(sessionId, Judge);
        }

        public ManualResetEventSlim Starved { get; } = new();

        /// <summary>Set when the counters cannot be read, with <see cref="UnreadableReason"/>: waiting longer would only end in a timeout that blames the process.</summary>
        public ManualResetEventSlim Unreadable { get; } = new();

        public string? UnreadableReason => _counters.Unreadable;

        public StarvationVerdict LastVerdict { get; private set; } = new(false, "no second read yet");

        public IReadOnlyList<PoolSecond> Seconds
        {
            get
            {
                lock (_lock)
                {
                    return [.. _counters.Seconds];
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

            lock (_lock)
            {
                _counters.OnEvent(data);
            }

            if (_counters.Unreadable is not null)
            {
                Unreadable.Set();
            }
        }

        // Under the lock, on the reader's thread: the rule reads every second so far.
        private void Judge(PoolSecond second)
        {
            var verdict = _rule.Evaluate(_counters.Seconds);
            LastVerdict = verdict;
            _onSecond?.Invoke(second, verdict);
            if (verdict.Starved)
            {
                Starved.Set();
            }
        }
    }
}

/// <summary>What <see cref="StarvationWatch"/> saw.</summary>
/// <param name="ProcessId">The process watched.</param>
/// <param name="Starved">Whether the rule declared starvation before the timeout.</param>
/// <param name="AfterSeconds">How long the watch ran: until the snapshot was analysed, or the timeout.</param>
/// <param name="Verdict">The rule's last verdict: the evidence, or the condition that kept it from firing.</param>
/// <param name="Seconds">Every second read, oldest first.</param>
/// <param name="Snapshot">The stacks taken at the moment of starvation; null when it never came.</param>
public sealed record WatchResult(int ProcessId, bool Starved, double AfterSeconds, StarvationVerdict Verdict, IReadOnlyList<PoolSecond> Seconds, StackSnapshot? Snapshot)
{
    /// <summary>The dump written at the moment of starvation (<c>watch --dump</c>); null when none was asked for or starvation never came.</summary>
    public string? DumpFile { get; init; }
}
