using System.Globalization;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>One second of a thread pool as its counters show it, in process or over EventPipe.</summary>
/// <param name="ThreadCount">Pool threads (<c>dotnet.thread_pool.thread.count</c>).</param>
/// <param name="QueueLength">Work items waiting for a thread (<c>dotnet.thread_pool.queue.length</c>).</param>
/// <param name="CompletedPerSecond">Work items completed in the second (the rate of <c>dotnet.thread_pool.work_item.count</c>).</param>
/// <param name="CpuPercent">The process's CPU in the second, as a share of all its processors (<c>dotnet.process.cpu.time</c> over <c>dotnet.process.cpu.count</c>).</param>
public readonly record struct PoolSecond(int ThreadCount, long QueueLength, double CompletedPerSecond, double CpuPercent);

/// <summary>
/// Thread-pool starvation as the tutorial reads it off dotnet-counters: the thread count climbs while the queue stays long,
/// the pool completes little, and the CPU stays well under 100 %. Threads are waiting, not working. The one rule the app's
/// detector, the CLI's <c>watch</c> and the shipped Prometheus alert apply; each of its figures is defined here once.
/// </summary>
public sealed record StarvationRule
{
    public static StarvationRule Default { get; } = new();

    /// <summary>How many consecutive seconds every condition must hold.</summary>
    public int WindowSeconds { get; init; } = 3;

    /// <summary>The queue must hold at least this many items: a few queued items are normal traffic.</summary>
    public long MinQueueLength { get; init; } = 10;

    /// <summary>
    /// The queue must hold at least this many seconds of work at the rate the pool completes it. A healthy pool that
    /// queues a burst drains it well within the second; a starved one completes a trickle while the queue waits.
    /// </summary>
    public double MinQueuedSecondsOfWork { get; init; } = 1;

    /// <summary>
    /// The process's CPU, as a share of all its processors, must stay under this: above it the pool itself stops adding
    /// threads for starvation, and a long queue is saturation (too much work), not starvation (threads that wait).
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
        var (first, last) = (window[0], window[^1]);
        var summary = string.Create(CultureInfo.InvariantCulture,
            $"threads {first.ThreadCount} → {last.ThreadCount}, queue {string.Join(" ", window.Select(s => s.QueueLength))}, completed/s {string.Join(" ", window.Select(s => Math.Round(s.CompletedPerSecond)))}, CPU {string.Join(" ", window.Select(s => $"{s.CpuPercent:0}%"))}");
        var failed = window.Select(FailedCondition).FirstOrDefault(f => f is not null)
            ?? (last.ThreadCount > first.ThreadCount ? null : "the thread count is not climbing");
        return failed is null
            ? new(true, $"{WindowSeconds} s of threads climbing while the queue stays long, completions low and CPU under {MaxCpuPercent:0}%: {summary}")
            : new(false, $"{failed}: {summary}");
    }

    private string? FailedCondition(PoolSecond second) =>
        second.QueueLength < MinQueueLength ? $"the queue is under {MinQueueLength}"
        : second.QueueLength < second.CompletedPerSecond * MinQueuedSecondsOfWork ? $"the queue drains within {MinQueuedSecondsOfWork:0.#} s"
        : second.CpuPercent >= MaxCpuPercent ? $"the CPU is at {MaxCpuPercent:0}% or more"
        : null;
}

/// <summary>The rule's answer for a window of seconds.</summary>
/// <param name="Starved">Whether every condition held.</param>
/// <param name="Reason">The first condition that failed, or the evidence, with the window's figures.</param>
public sealed record StarvationVerdict(bool Starved, string Reason);
