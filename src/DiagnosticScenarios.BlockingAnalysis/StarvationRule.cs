using System.Globalization;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>One second of a thread pool as its counters show it, in process or over EventPipe.</summary>
/// <param name="ThreadCount">Pool threads (<c>dotnet.thread_pool.thread.count</c>).</param>
/// <param name="QueueLength">Work items waiting for a thread (<c>dotnet.thread_pool.queue.length</c>).</param>
/// <param name="CompletedPerSecond">Work items completed in the second (the rate of <c>dotnet.thread_pool.work_item.count</c>).</param>
/// <param name="CpuPercent">The process's CPU in the second, as a share of all its processors (<c>dotnet.process.cpu.time</c> over <c>dotnet.process.cpu.count</c>).</param>
public readonly record struct PoolSecond(int ThreadCount, long QueueLength, double CompletedPerSecond, double CpuPercent);

/// <summary>
/// Thread-pool starvation as the counters show it: for a few seconds the pool's queue never empties, stays long, and a
/// queued item waits a good fraction of a second for a thread (the queue's length over the rate the pool completes work:
/// Little's law), while the CPU stays well under 100 %. Threads are waiting, not working. The one rule the app's detector, the CLI's
/// <c>watch</c> and the shipped Prometheus alert apply; each of its figures is defined here once. The thread count is not a
/// condition: it climbs when the pool compensates (Task waits, and a pool that completes nothing), not under a lock
/// convoy, whose waiters complete one by one while every queued item waits.
/// </summary>
public sealed record StarvationRule
{
    public static StarvationRule Default { get; } = new();

    /// <summary>How many consecutive seconds the window spans.</summary>
    public int WindowSeconds { get; init; } = 3;

    /// <summary>The queue must hold at least this many items on average over the window: a few queued items are normal traffic.</summary>
    public long MinQueueLength { get; init; } = 10;

    /// <summary>
    /// The queue must hold at least this many seconds of work at the rate the pool completes it, over the window (its
    /// summed length over its summed completions): how long a queued item waits. A healthy pool drains a burst in
    /// milliseconds; a starved one leaves each item waiting for a thread.
    /// </summary>
    public double MinQueuedSecondsOfWork { get; init; } = 0.25;

    /// <summary>
    /// The process's CPU, as a share of all its processors, must stay under this every second: above it the pool itself
    /// stops adding threads for starvation, and a long queue is saturation (too much work), not starvation (threads that wait).
    /// </summary>
    public double MaxCpuPercent { get; init; } = 80;

    /// <summary>Whether the last <see cref="WindowSeconds"/> seconds (oldest first) show starvation, and why or why not.</summary>
    public StarvationVerdict Evaluate(IReadOnlyList<PoolSecond> seconds)
    {
        ArgumentNullException.ThrowIfNull(seconds);
        if (seconds.Count < WindowSeconds)
        {
            return new(false, $"fewer than {WindowSeconds} seconds seen");
        }

        var window = seconds.Skip(seconds.Count - WindowSeconds).ToList();
        var queue = window.Average(s => (double)s.QueueLength);
        var completed = window.Sum(s => s.CompletedPerSecond);
        var waits = completed > 0 ? window.Sum(s => s.QueueLength) / completed : double.PositiveInfinity;
        var summary = string.Create(CultureInfo.InvariantCulture,
            $"queue {string.Join(" ", window.Select(s => s.QueueLength))}, completed/s {string.Join(" ", window.Select(s => Math.Round(s.CompletedPerSecond)))}, a queued item waits {(double.IsInfinity(waits) ? "without end" : $"{waits:0.##} s")}, CPU {string.Join(" ", window.Select(s => $"{s.CpuPercent:0}%"))}, threads {window[0].ThreadCount} → {window[^1].ThreadCount}");
        var failed = window.Any(s => s.QueueLength == 0) ? "the queue emptied"
            : queue < MinQueueLength ? $"the queue holds under {MinQueueLength} items on average"
            : waits < MinQueuedSecondsOfWork ? string.Create(CultureInfo.InvariantCulture, $"a queued item waits under {MinQueuedSecondsOfWork:0.##} s")
            : window.Any(s => s.CpuPercent >= MaxCpuPercent) ? $"the CPU is at {MaxCpuPercent:0}% or more"
            : null;
        return failed is null
            ? new(true, string.Create(CultureInfo.InvariantCulture, $"{WindowSeconds} s of a long queue whose items wait for a thread while the CPU stays under {MaxCpuPercent:0}%: {summary}"))
            : new(false, $"{failed}: {summary}");
    }
}

/// <summary>The rule's answer for a window of seconds.</summary>
/// <param name="Starved">Whether every condition held.</param>
/// <param name="Reason">The first condition that failed, or the evidence, with the window's figures.</param>
public sealed record StarvationVerdict(bool Starved, string Reason);
