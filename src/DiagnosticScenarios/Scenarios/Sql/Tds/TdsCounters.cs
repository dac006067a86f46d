using System.Diagnostics;

namespace DiagnosticScenarios.Scenarios.Sql.Tds;

/// <summary>What the sessions tell the responder: attentions, WAITFORs running, and each one answered.</summary>
internal sealed class TdsCounters(Action<WaitforTiming>? answered)
{
    private const int TimingCapacity = 10_000;

    private readonly Queue<WaitforTiming> _timings = new();
    private long _attentions;
    private long _waitforsRunning;

    public long Attentions => Interlocked.Read(ref _attentions);

    public long WaitforsRunning => Interlocked.Read(ref _waitforsRunning);

    public void RecordAttention() => Interlocked.Increment(ref _attentions);

    public void WaitforStarted() => Interlocked.Increment(ref _waitforsRunning);

    public void WaitforEnded() => Interlocked.Decrement(ref _waitforsRunning);

    public void Record(WaitforTiming timing)
    {
        answered?.Invoke(timing);
        lock (_timings)
        {
            if (_timings.Count == TimingCapacity)
            {
                _timings.Dequeue();
            }

            _timings.Enqueue(timing);
        }
    }

    public IReadOnlyList<WaitforTiming> Timings()
    {
        lock (_timings)
        {
            return [.. _timings];
        }
    }
}

/// <summary>One answered WAITFOR, in <see cref="Stopwatch"/> time: due = batch received + delay; sent = DONE written.</summary>
public readonly record struct WaitforTiming(TimeSpan Delay, long DueTimestamp, long SentTimestamp)
{
    /// <summary>How late the DONE went out; on a responder that does not share the starved pool this stays near zero.</summary>
    public TimeSpan Lateness => Stopwatch.GetElapsedTime(DueTimestamp, SentTimestamp);
}
