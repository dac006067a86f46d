namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Events the runtime dropped from a session, counted from the gaps in their sequence numbers (TraceEvent's
/// <c>TraceLog.EventsLost</c>): a session's buffer that fills faster than it is read, on a busy machine, loses events
/// rather than wait. A snapshot or a wait trace that lost some may lack threads or waits, and must say so rather than
/// pass for complete.
/// </summary>
public static class SessionLoss
{
    /// <summary>The warning for <paramref name="eventsLost"/> lost events; null when none was.</summary>
    public static string? Warning(int eventsLost) => eventsLost > 0
        ? $"The runtime dropped {eventsLost} events of this session (its buffer filled faster than it was read): threads or waits may be missing; take it again."
        : null;
}
