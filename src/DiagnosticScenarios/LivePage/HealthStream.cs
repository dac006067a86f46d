using System.Globalization;
using System.Net.ServerSentEvents;
using System.Runtime.CompilerServices;
using DiagnosticScenarios.Detection;
using DiagnosticScenarios.Infrastructure;

namespace DiagnosticScenarios.LivePage;

/// <summary>
/// <c>GET /api/threadpool/stream</c>: one <see cref="HealthSample"/> a second as server-sent events, each with its
/// sequence as the event id, so a reader that reconnects with <c>Last-Event-ID</c> (or <c>?after=</c>) gets what it missed.
/// </summary>
internal static class HealthStream
{
    // A new reader gets the last five minutes at once, so the page's charts start full.
    private const int InitialBacklog = 300;

    /// <summary>
    /// The last sequence a reader has: the one its <c>Last-Event-ID</c> (a browser reconnecting) or <c>?after=</c> names,
    /// or, for a new reader, five minutes before the latest. On the app and on the live page's server. A sequence beyond
    /// the latest was another run's (the page stayed open while the app restarted, and its browser reconnects with the old
    /// run's id): that reader is new to this run, or it would get nothing until this run's samples caught up.
    /// </summary>
    public static long LastSeen(string? lastEventId, string? after, long latestSequence) =>
        (ParseSequence(lastEventId) ?? ParseSequence(after)) is { } named && named <= latestSequence
            ? named
            : Math.Max(0, latestSequence - InitialBacklog);

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

        var last = LastSeen(context.Request.Headers["Last-Event-ID"].ToString(), after, sampler.LatestSequence);
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
                    EventId = sample.Sequence.ToString(CultureInfo.InvariantCulture),
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
