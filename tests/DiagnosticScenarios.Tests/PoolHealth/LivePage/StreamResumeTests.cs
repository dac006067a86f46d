using DiagnosticScenarios.PoolHealth.LivePage;

namespace DiagnosticScenarios.Tests.PoolHealth.LivePage;

/// <summary>
/// Where the stream starts for a reader, by what it sends: the sequence after which it gets samples, in a run with the id
/// 1000 whose latest sample is 10 (or 400, where a new reader's five minutes start later than the run's first).
/// </summary>
public sealed class StreamResumeTests
{
    private const long Run = 1000;

    [Theory]
    [InlineData("1000-4", null, 10, 4)] // a browser reconnecting to the same run: what it missed
    [InlineData("1000-4", "7", 10, 4)] // its URL's after= is from its first connection: the header decides
    [InlineData("999-4", null, 10, 0)] // another run's id: a new reader, whatever the old sequence
    [InlineData("999-4", "7", 10, 0)] // another run's id beside the URL's after=: still a new reader
    [InlineData("4", null, 10, 0)] // a sequence without a run names no run
    [InlineData("1000-4-1", null, 10, 0)]
    [InlineData("1000-", null, 10, 0)]
    [InlineData("1000-11", null, 10, 0)] // beyond the latest: not a sample of this run
    [InlineData(null, "7", 10, 7)] // a first connection's after=, a sequence of this run
    [InlineData("", "7", 10, 7)]
    [InlineData(null, "11", 10, 0)] // an after= beyond the latest: a new reader
    [InlineData(null, null, 10, 0)] // a new reader: the run from its first sample
    [InlineData(null, null, 400, 100)] // a new reader of an older run: its last five minutes
    [InlineData("999-4", null, 400, 100)]
    public void LastSeen_IsTheSequenceAfterWhichTheReaderGetsSamples(string? lastEventId, string? after, long latest, long expected) =>
        Assert.Equal(expected, HealthStream.LastSeen(lastEventId, after, Run, latest));
}
