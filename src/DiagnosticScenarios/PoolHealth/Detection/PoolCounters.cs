using System.Diagnostics;
using DiagnosticScenarios.BlockingAnalysis;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// What the detector judges, a second at a time: the pool's threads and queue, the work items it completed and the
/// process's CPU since the last reading. Read only by the detector's own thread.
/// </summary>
public interface IPoolCounters
{
    /// <summary>The second since the last reading, or since the counters were made.</summary>
    PoolSecond TakeSecond();
}

/// <summary>The runtime's own counters, in process: <see cref="ThreadPool"/> and <see cref="Environment.CpuUsage"/>.</summary>
public sealed class RuntimePoolCounters : IPoolCounters
{
    private long _lastCompletedWorkItems = ThreadPool.CompletedWorkItemCount;
    private TimeSpan _lastCpu = Environment.CpuUsage.TotalTime;
    private long _lastReadAt = Stopwatch.GetTimestamp();

    public PoolSecond TakeSecond()
    {
        var now = Stopwatch.GetTimestamp();
        var seconds = Stopwatch.GetElapsedTime(_lastReadAt, now).TotalSeconds;
        var completed = ThreadPool.CompletedWorkItemCount;
        var cpu = Environment.CpuUsage.TotalTime;
        var second = new PoolSecond(
            ThreadPool.ThreadCount,
            ThreadPool.PendingWorkItemCount,
            (completed - _lastCompletedWorkItems) / seconds,
            Math.Round(100 * (cpu - _lastCpu).TotalSeconds / (seconds * Environment.ProcessorCount), 1));
        (_lastCompletedWorkItems, _lastCpu, _lastReadAt) = (completed, cpu, now);
        return second;
    }
}
