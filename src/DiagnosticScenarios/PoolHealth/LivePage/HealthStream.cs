using System.Globalization;
using System.Net.ServerSentEvents;
using System.Runtime.CompilerServices;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.Problems;

namespace DiagnosticScenarios.PoolHealth.LivePage;

/// <summary>
/// <c>GET /api/threadpool/stream</c>: one <see cref="HealthSample"/> a second as server-sent events, each with its run and
/// sequence as the event id (<see cref="EventId"/>), so a reader that reconnects with <c>Last-Event-ID</c> (or
/// <c>?after=</c>, a sequence of this run) gets what it missed.
/// </summary>
internal static class HealthStream
{
    // A new reader gets the last five minutes at once, so the page's charts start full.
    private const int InitialBacklog = 300;

    /// <summary>A sample's SSE id: its run, a dash, its sequence (<c>1764986400123-42</c>).</summary>
    public static string EventId(HealthSample sample) =>
        string.Create(CultureInfo.InvariantCulture, $"{sample.RunId}-{sample.Sequence}");

    /// <summary>
    /// The last sequence a reader has, on the app and on the live page's server. A reader that reconnects (a browser does
    /// by itself) says it with <c>Last-Event-ID</c>, which then decides alone: this run's id names its sequence; an id of
    /// another run (the page stayed open while the app restarted) or any other text makes a new reader of this run,
    /// whatever the old sequence was, and whatever <c>?after=</c> the reader's URL still carries from its first connection:
    /// the old run's sequence 5 says nothing about this run's. Without the header, <c>?after=</c> names a sequence of this
    /// run. A new reader gets the last five minutes (the run's first sample onwards while it is younger); so does an
    /// <c>after</c> beyond the latest, which no reader of this run can have seen.
    /// </summary>
    public static long LastSeen(string? lastEventId, string? after, long runId, long latestSequence) =>
        (string.IsNullOrEmpty(lastEventId) ? ParseSequence(after) : SequenceOfRun(lastEventId, runId)) is { } named && named <= latestSequence
            ? named
            : Math.Max(0, latestSequence - InitialBacklog);

    private static long? SequenceOfRun(string eventId, long runId) =>
        eventId.Split('-') is [var run, var sequence] && ParseSequence(run) == runId ? ParseSequence(sequence) : null;

    /// <summary>Tells the browser to retry a dropped stream after a second; it then sends Last-Event-ID by itself.</summary>
    public static readonly TimeSpan Reconnection = TimeSpan.FromSeconds(1);

    /// <summary>The 400's errors for an <c>after</c> that is not a sequence number, on the app and on the live page's server.</summary>
    public static Dictionary<string, string[]> InvalidAfter(string after) =>
        new(StringComparer.Ordinal) { ["after"] = [$"The value '{after}' is not valid: after must be a whole number from 0."] };

    public static IResult Open(HttpContext context, HealthSampler sampler, IHostApplicationLifetime lifetime, string? after)
    {
        if (after is not null && ParseSequence(after) is null)
        {
            return ParameterProblem.Result(InvalidAfter(after));
        }

        var last = LastSeen(context.Request.Headers["Last-Event-ID"].ToString(), after, sampler.RunId, sampler.LatestSequence);
        context.Response.Headers["X-Accel-Buffering"] = "no";
        return TypedResults.ServerSentEvents(SamplesAsync(sampler, last, lifetime.ApplicationStopping));
    }

    private static async IAsyncEnumerable<SseItem<HealthSample>> SamplesAsync(
        HealthSampler sampler, long last, CancellationToken stopping, [EnumeratorCancellation] CancellationToken aborted = default)
    {
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(aborted, stopping);
        var first = true;
        while (!stop.IsCancellationRequested)
        {
            var next = sampler.NextSample();
            foreach (var sample in sampler.SamplesAfter(last))
            {
                yield return new SseItem<HealthSample>(sample, "sample")
                {
                    EventId = EventId(sample),
                    ReconnectionInterval = first ? Reconnection : null,
                };
                first = false;
                last = sample.Sequence;
            }

            // The reader left or the app is stopping: the stream simply ends.
            await next.WaitAsync(stop.Token).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }

    public static long? ParseSequence(string? value) =>
        long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var sequence) ? sequence : null;
}
