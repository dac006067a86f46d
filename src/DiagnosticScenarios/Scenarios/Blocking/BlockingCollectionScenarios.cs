using System.Collections.Concurrent;
using System.ComponentModel.DataAnnotations;
using System.Threading.Channels;
using DiagnosticScenarios.Common;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// A request hands a job to a background worker and waits for the worker's reply on a queue of its own: a
/// <c>BlockingCollection</c> taken from on the request thread, or a <c>Channel</c> read with <c>await</c>.
/// </summary>
[ApiController]
[Route("api/blocking")]
[Produces("text/plain")]
public sealed class BlockingCollectionScenariosController(BackgroundWorker worker) : ControllerBase
{
    /// <summary>BAD: <c>BlockingCollection.Take()</c> on the request thread, parked until the worker's reply arrives.</summary>
    /// <remarks>The worker replies from a timer, on the pool: the threads parked in Take are the ones its replies need.</remarks>
    /// <param name="delayMs">How long the worker takes to reply, in milliseconds (0–60000, default 200).</param>
    [HttpGet("blockingcollection")]
    public string Take([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
        using var replies = new BlockingCollection<string>(boundedCapacity: 1);
        worker.Run(Delay(delayMs), replies.Add);
#pragma warning disable DSB004 // deliberate: this endpoint demonstrates a blocking take
        // BAD: Take parks this pool thread until the worker hands its reply over.
        _ = replies.Take();
#pragma warning restore DSB004
        return "success:blocking-blockingcollection";
    }

    /// <summary>GOOD: the reply comes through a <c>Channel</c> read with <c>await ReadAsync</c>; no thread waits for it.</summary>
    /// <param name="delayMs">How long the worker takes to reply, in milliseconds (0–60000, default 200).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away; the reply is then dropped.</param>
    [HttpGet("channel")]
    public async Task<string> ReadAsync([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
        var replies = Channel.CreateBounded<string>(1);
        worker.Run(Delay(delayMs), reply => replies.Writer.TryWrite(reply));
        // GOOD: await the channel's ReadAsync instead of a blocking Take; that is the one difference.
        _ = await replies.Reader.ReadAsync(cancellationToken);
        return "success:blocking-channel";
    }

    private static TimeSpan Delay(int? delayMs) => TimeSpan.FromMilliseconds(delayMs ?? BlockingDefaults.BlockingCollectionDelayMs);
}

/// <summary>
/// A background worker that replies to each job after it has taken its time, as a queue consumer or a hosted service
/// would: from a timer, on the thread pool, like the rest of an app's background work.
/// </summary>
public sealed class BackgroundWorker
{
    /// <summary>Starts a job that hands its reply to <paramref name="reply"/> after <paramref name="duration"/>.</summary>
    public void Run(TimeSpan duration, Action<string> reply) => _ = ReplyAsync(duration, reply);

    private static async Task ReplyAsync(TimeSpan duration, Action<string> reply)
    {
        await Task.Delay(duration);
        reply("done");
    }
}
