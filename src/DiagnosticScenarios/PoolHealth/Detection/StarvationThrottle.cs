namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// The one throttle of <see cref="StarvationDeclared"/>: a starved second raises the event unless one was raised less than
/// an interval before, whether the starvation lasted through it or came and went. A pool that flaps at the rule's edge
/// gets one log line and one capture per interval, not one per onset.
/// </summary>
public sealed class StarvationThrottle(TimeSpan interval)
{
    private TimeSpan? _lastRaisedAt;

    /// <summary>Whether the second that ended at <paramref name="at"/> (any monotonic clock) raises the event.</summary>
    public bool Raises(bool starved, TimeSpan at)
    {
        if (!starved || _lastRaisedAt is { } last && at - last < interval)
        {
            return false;
        }

        _lastRaisedAt = at;
        return true;
    }
}
