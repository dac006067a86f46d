using System.ComponentModel.DataAnnotations;
using DiagnosticScenarios.Common;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// A throttle: at most <see cref="BlockingDefaults.SemaphoreThrottle"/> calls of the mock query at once, the way apps
/// protect a dependency that allows only so many. The query inside is awaited on both sides; only the wait for a slot differs.
/// </summary>
[ApiController]
[Route("api/blocking")]
[Produces("text/plain")]
public sealed class SemaphoreScenariosController(MockDatabase database) : ControllerBase
{
    private static readonly SemaphoreSlim Throttle = new(BlockingDefaults.SemaphoreThrottle, BlockingDefaults.SemaphoreThrottle);
    private static readonly SemaphoreSlim AsyncThrottle = new(BlockingDefaults.SemaphoreThrottle, BlockingDefaults.SemaphoreThrottle);

    /// <summary>BAD: waits for a slot of the throttle with <c>SemaphoreSlim.Wait()</c>, parking a pool thread while the slots are taken.</summary>
    /// <remarks>
    /// The calls holding the slots await their query, and their continuations, which free the slots, need pool threads:
    /// the very threads parked in <c>Wait()</c>.
    /// </remarks>
    /// <param name="delayMs">How long the query inside the throttle takes, in milliseconds (0–60000, default 200).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away.</param>
    [HttpGet("semaphore")]
    public async Task<string> Semaphore([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
#pragma warning disable VSTHRD103, DSB001 // deliberate: this endpoint demonstrates a synchronous wait inside an async method
        // BAD: Wait() parks this pool thread until a slot frees, and freeing one needs a pool thread.
        Throttle.Wait(cancellationToken);
#pragma warning restore VSTHRD103, DSB001
        try
        {
            await database.QueryAsync(Delay(delayMs), cancellationToken);
        }
        finally
        {
            Throttle.Release();
        }

        return "success:blocking-semaphore";
    }

    /// <summary>GOOD: the same throttle, waited for with <c>await WaitAsync()</c>; a request waiting for a slot holds no thread.</summary>
    /// <param name="delayMs">How long the query inside the throttle takes, in milliseconds (0–60000, default 200).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away, waiting for a slot or in the query.</param>
    [HttpGet("semaphore-async")]
    public async Task<string> SemaphoreAsync([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
        // GOOD: await WaitAsync() instead of Wait(); that is the one difference.
        await AsyncThrottle.WaitAsync(cancellationToken);
        try
        {
            await database.QueryAsync(Delay(delayMs), cancellationToken);
        }
        finally
        {
            AsyncThrottle.Release();
        }

        return "success:blocking-semaphore-async";
    }

    private static TimeSpan Delay(int? delayMs) => TimeSpan.FromMilliseconds(delayMs ?? BlockingDefaults.SemaphoreDelayMs);
}
