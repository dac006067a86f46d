using System.ComponentModel.DataAnnotations;
using DiagnosticScenarios.Common;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// One shared resource, one request at a time, around the same mock query: a <c>lock</c> held across a blocking call, or
/// a <c>SemaphoreSlim(1)</c> held across an awaited one. Either way the pair serves one request per delay; only what the
/// waiting requests hold differs.
/// </summary>
[ApiController]
[Route("api/blocking")]
[Produces("text/plain")]
public sealed class LockScenariosController(MockDatabase database) : ControllerBase
{
    private static readonly Lock Gate = new();
    private static readonly SemaphoreSlim AsyncGate = new(1, 1);

    /// <summary>BAD: a <c>lock</c> held across a blocking query; every other request parks a pool thread on the lock.</summary>
    /// <remarks>The pool gets no signal from a thread waiting for a lock, and the lock lets one request through per delay.</remarks>
    /// <param name="delayMs">How long the query under the lock takes, in milliseconds (0–60000, default 16).</param>
    [HttpGet("lock")]
    public string Lock([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
#pragma warning disable DSB005, DSB001 // deliberate: this endpoint demonstrates a lock held across a blocking query
        // BAD: the lock is held across a blocking query, so every request behind it parks its pool thread on the lock.
        lock (Gate)
        {
            database.Query(Delay(delayMs));
        }
#pragma warning restore DSB005, DSB001

        return "success:blocking-lock";
    }

    /// <summary>GOOD: <c>SemaphoreSlim(1).WaitAsync</c> held across the awaited query; the requests behind it hold no thread.</summary>
    /// <param name="delayMs">How long the query under the semaphore takes, in milliseconds (0–60000, default 16).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away, in the queue or in the query.</param>
    [HttpGet("lock-async")]
    public async Task<string> LockAsync([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
        // GOOD: the requests behind the holder await the semaphore instead of parking a thread on a lock; that is the one difference.
        await AsyncGate.WaitAsync(cancellationToken);
        try
        {
            await database.QueryAsync(Delay(delayMs), cancellationToken);
        }
        finally
        {
            AsyncGate.Release();
        }

        return "success:blocking-lock-async";
    }

    private static TimeSpan Delay(int? delayMs) => TimeSpan.FromMilliseconds(delayMs ?? BlockingDefaults.LockDelayMs);
}
