using System.ComponentModel.DataAnnotations;
using System.Diagnostics;
using System.Text.Json.Serialization;
using DiagnosticScenarios.Common;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Scenarios.Mock;

/// <summary>
/// Thread-pool starvation, one code shape per endpoint. Every endpoint runs the same mock query;
/// only the way it waits differs. The single GOOD shape is <see cref="TaskAsyncWait"/>.
/// </summary>
[ApiController]
[Route("api/diagscenario")]
[Produces("text/plain")]
public sealed class StarvationScenariosController(MockDatabase database, IOptions<ScenarioOptions> options, IHostApplicationLifetime lifetime) : ControllerBase
{
    private const int MaxBurstCount = 10_000;

    /// <summary>BAD: sync-over-async. A sync action reads <c>.Result</c> on the async query and holds a pool thread for the whole wait.</summary>
    /// <remarks>The pool injects threads faster for Task waits since .NET 6 (cooperative blocking), so this degrades less than the others, but it degrades.</remarks>
    /// <param name="delayMs">How long the mock database takes to answer, in milliseconds (0–60000, default 500).</param>
    [HttpGet("taskwait")]
    public string TaskWait([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
#pragma warning disable VSTHRD002, DSB002 // deliberate: this endpoint demonstrates sync-over-async
        // BAD: .Result parks this pool thread for the whole query (sync-over-async).
        _ = database.QueryAsync(MockDelay(delayMs)).Result;
#pragma warning restore VSTHRD002, DSB002
        return "success:taskwait";
    }

    /// <summary>BAD: polls <c>while (!task.IsCompleted) Thread.Sleep(10)</c>, a block the pool does not recognise.</summary>
    /// <remarks>No cooperative-blocking help: thread injection falls back to about 1–2 threads a second. The worst of the family.</remarks>
    /// <param name="delayMs">How long the mock database takes to answer, in milliseconds (0–60000, default 500).</param>
    [HttpGet("tasksleepwait")]
    public string TaskSleepWait([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
        var query = database.QueryAsync(MockDelay(delayMs));

#pragma warning disable DSB003 // deliberate: this endpoint demonstrates a wait the pool does not recognise
        // BAD: Thread.Sleep in a loop looks like work to the pool, so it gets no compensating threads.
        while (!query.IsCompleted)
        {
            Thread.Sleep(10);
        }
#pragma warning restore DSB003

        return "success:tasksleepwait";
    }

    /// <summary>GOOD: an async action awaits the query; no thread is held while it is in flight.</summary>
    /// <param name="delayMs">How long the mock database takes to answer, in milliseconds (0–60000, default 500).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away.</param>
    [HttpGet("taskasyncwait")]
    public async Task<string> TaskAsyncWait([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
        // GOOD: await hands this thread back to the pool until the query answers; that is the one difference from taskwait.
        await database.QueryAsync(MockDelay(delayMs), cancellationToken);
        return "success:taskasyncwait";
    }

    /// <summary>BAD: a sync action calls a blocking driver method, the classic sync-I/O handler.</summary>
    /// <remarks>The thread waits in the driver, where the pool cannot see it: no compensation at all.</remarks>
    /// <param name="delayMs">How long the mock database takes to answer, in milliseconds (0–60000, default 500).</param>
    [HttpGet("syncio")]
    public string SyncIo([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
#pragma warning disable DSB001 // deliberate: this endpoint demonstrates a blocking driver call
        // BAD: the blocking query holds this pool thread for its whole duration.
        database.Query(MockDelay(delayMs));
#pragma warning restore DSB001
        return "success:syncio";
    }

    /// <summary>BAD: an <c>async Task</c> action that calls the blocking driver method inside.</summary>
    /// <remarks>An async signature does not make blocking code asynchronous; it behaves exactly like syncio.</remarks>
    /// <param name="delayMs">How long the mock database takes to answer, in milliseconds (0–60000, default 500).</param>
#pragma warning disable CS1998 // deliberate: an async method with nothing to await is the point of this endpoint
    [HttpGet("asyncsyncio")]
    public async Task<string> AsyncSyncIo([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
#pragma warning disable VSTHRD103, DSB001 // deliberate: this endpoint demonstrates a blocking call inside an async method
        // BAD: 'async' on the signature changes nothing; this call still blocks the pool thread.
        database.Query(MockDelay(delayMs));
#pragma warning restore VSTHRD103, DSB001
        return "success:asyncsyncio";
    }
#pragma warning restore CS1998

    /// <summary>BAD: "fake async". <c>await Task.Run(...)</c> around the blocking query frees the request thread by blocking another pool thread.</summary>
    /// <remarks>Of the blocking-call analyzers only MA0045, off by default, flags the call inside the lambda; and it costs a thread switch on top of the blocked thread.</remarks>
    /// <param name="delayMs">How long the mock database takes to answer, in milliseconds (0–60000, default 500).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away (only before the blocking query starts).</param>
    [HttpGet("taskrunwait")]
    public async Task<string> TaskRunWait([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
#pragma warning disable DSB006 // deliberate: this endpoint demonstrates fake async
        // BAD: Task.Run moves the blocking query to another pool thread, which it holds for the whole query.
        await Task.Run(() => database.Query(MockDelay(delayMs)), cancellationToken);
#pragma warning restore DSB006
        return "success:taskrunwait";
    }

    /// <summary>BAD: sync-over-async with <c>.GetAwaiter().GetResult()</c>; the same block as <c>.Result</c>.</summary>
    /// <remarks>It only avoids the AggregateException wrapping; the thread is held all the same.</remarks>
    /// <param name="delayMs">How long the mock database takes to answer, in milliseconds (0–60000, default 500).</param>
    [HttpGet("getawaiterresult")]
    public string GetAwaiterResult([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
#pragma warning disable VSTHRD002, DSB002 // deliberate: this endpoint demonstrates sync-over-async
        // BAD: GetAwaiter().GetResult() parks this pool thread for the whole query, just like .Result.
        database.QueryAsync(MockDelay(delayMs)).GetAwaiter().GetResult();
#pragma warning restore VSTHRD002, DSB002
        return "success:getawaiterresult";
    }

    /// <summary>Baseline: answers at once, no query. Under starvation even this gets slow: the collateral damage.</summary>
    [HttpGet("ping")]
    public string Ping() => "success:ping";

    /// <summary>
    /// BAD (<c>mode=blocking</c>) / GOOD (<c>mode=async</c>): starts <c>count</c> tasks that each wait <c>delayMs</c>,
    /// by a blocking <c>.Wait()</c> inside <c>Task.Run</c> or by <c>await</c>, and answers the elapsed time.
    /// </summary>
    /// <remarks>
    /// The console experiment: async finishes in about one delay. Blocking needs about a thread per task, because each
    /// Task.Delay completion waits in the pool queue behind the tasks not yet started; on two cores that takes minutes.
    /// Tasks not yet started when the client goes away, or the app stops, never start.
    /// </remarks>
    /// <param name="count">How many tasks to start (1–10000, default 1000).</param>
    /// <param name="mode"><c>blocking</c> or <c>async</c> (default blocking).</param>
    /// <param name="delayMs">How long each task waits, in milliseconds (0–60000, default 1000).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away.</param>
    [HttpGet("taskburst")]
    [EnableRateLimiting(ScenarioConcurrencyLimits.BlockingTaskBurstPolicy)]
    [ProducesResponseType(StatusCodes.Status200OK)]
    [ProducesResponseType(StatusCodes.Status503ServiceUnavailable)]
    public async Task<ActionResult<string>> TaskBurst(
        [FromQuery, Range(1, MaxBurstCount)] int? count,
        [FromQuery] TaskBurstMode? mode,
        [FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs,
        CancellationToken cancellationToken)
    {
        var tasks = count ?? 1000;
        var burstMode = mode ?? TaskBurstMode.Blocking;
        var delay = TimeSpan.FromMilliseconds(delayMs ?? options.Value.TaskBurstDelayMs);

        // Noticed off the pool, so a starved pool still drops the tasks of a client that has gone.
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, lifetime.ApplicationStopping);
        using var watch = ClientDisconnectWatch.Start(HttpContext, stop);
        var elapsed = Stopwatch.StartNew();
        var burst = new Task[tasks];
        for (var i = 0; i < tasks; i++)
        {
            burst[i] = burstMode == TaskBurstMode.Blocking
#pragma warning disable VSTHRD002, VSTHRD110, DSB006 // deliberate: each task blocks a pool thread on purpose
                // BAD: .Wait() parks a pool thread per task; the pool must grow to run them all.
                ? Task.Run(() => Task.Delay(delay).Wait(stop.Token), stop.Token)
#pragma warning restore VSTHRD002, VSTHRD110, DSB006
                // GOOD: await releases the thread; all tasks wait at once on timers.
                : Task.Run(async () => await Task.Delay(delay, stop.Token), stop.Token);
        }

        try
        {
            await Task.WhenAll(burst).WaitAsync(stop.Token);
        }
        catch (OperationCanceledException) when (lifetime.ApplicationStopping.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            return Problem(statusCode: StatusCodes.Status503ServiceUnavailable, title: "The app is stopping.",
                detail: $"The burst was dropped after {elapsed.ElapsedMilliseconds} ms; its tasks not yet started never ran.");
        }

        elapsed.Stop();

        return $"success:taskburst mode={burstMode.ToString().ToLowerInvariant()} count={tasks} delayMs={(long)delay.TotalMilliseconds} elapsedMs={elapsed.ElapsedMilliseconds}";
    }

    private TimeSpan MockDelay(int? delayMs) => TimeSpan.FromMilliseconds(delayMs ?? options.Value.MockDelayMs);
}

/// <summary>How each taskburst task waits.</summary>
[JsonConverter(typeof(JsonStringEnumConverter<TaskBurstMode>))]
public enum TaskBurstMode
{
    /// <summary>A blocking <c>.Wait()</c> inside <c>Task.Run</c>.</summary>
    [JsonStringEnumMemberName("blocking")]
    Blocking,

    /// <summary><c>await Task.Delay</c>.</summary>
    [JsonStringEnumMemberName("async")]
    Async,
}
