using System.Diagnostics.Tracing;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// Tallies the thread pool's own explanation of each change in its worker-thread goal, from the runtime's
/// <c>ThreadPoolWorkerThreadAdjustmentAdjustment</c> event (id 55), received in process.
/// Starvation means the gate thread saw no progress for 500 ms; cooperative blocking means a pool thread
/// blocked on a Task (<c>.Result</c>, <c>.Wait()</c>) and told the pool so.
/// </summary>
/// <remarks>
/// One per app, a singleton of its container, which never disposes it (see <see cref="DetectionRegistration"/>):
/// disposing an EventListener that receives runtime events can hang in <c>EventListener.Dispose</c> while the EventPipe
/// dispatch thread delivers (as when a test host starts and stops several apps). The process's end is its end.
/// </remarks>
public sealed class ThreadInjectionListener : EventListener
{
    private const string RuntimeProvider = "Microsoft-Windows-DotNETRuntime";
    private const EventKeywords ThreadingKeyword = (EventKeywords)0x10000;
    private const int AdjustmentEventId = 55;

    // ThreadAdjustmentReasonMap in dotnet/runtime's NativeRuntimeEventSource.
    private const int StarvationReason = 6;
    private const int CooperativeBlockingReason = 8;

    private long _starvation;
    private long _cooperativeBlocking;
    private long _other;
    private long _lastGoal;

    public long Starvation => Interlocked.Read(ref _starvation);

    public long CooperativeBlocking => Interlocked.Read(ref _cooperativeBlocking);

    public long Other => Interlocked.Read(ref _other);

    /// <summary>The worker-thread goal the last adjustment set (0 until the first one).</summary>
    public long LastGoal => Interlocked.Read(ref _lastGoal);

    public InjectionCounts Counts() => new(Starvation, CooperativeBlocking, Other, LastGoal);

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == RuntimeProvider)
        {
            EnableEvents(eventSource, EventLevel.Informational, ThreadingKeyword);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs eventData)
    {
        if (eventData.EventId != AdjustmentEventId || eventData.Payload is null || eventData.PayloadNames is null)
        {
            return;
        }

        var reason = Convert.ToInt32(Field(eventData, "Reason"), System.Globalization.CultureInfo.InvariantCulture);
        Interlocked.Exchange(ref _lastGoal, Convert.ToInt64(Field(eventData, "NewWorkerThreadCount"), System.Globalization.CultureInfo.InvariantCulture));
        switch (reason)
        {
            case StarvationReason:
                Interlocked.Increment(ref _starvation);
                break;
            case CooperativeBlockingReason:
                Interlocked.Increment(ref _cooperativeBlocking);
                break;
            default:
                Interlocked.Increment(ref _other);
                break;
        }
    }

    private static object? Field(EventWrittenEventArgs eventData, string name)
    {
        var index = eventData.PayloadNames!.IndexOf(name);
        return index < 0 ? null : eventData.Payload![index];
    }
}

/// <summary>Thread-goal adjustments by the reason the runtime gave, since the app started.</summary>
public sealed record InjectionCounts(long Starvation, long CooperativeBlocking, long Other, long LastWorkerThreadGoal);
