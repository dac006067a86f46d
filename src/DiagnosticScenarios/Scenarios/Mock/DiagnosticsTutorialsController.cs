using System.ComponentModel.DataAnnotations;
using System.Diagnostics;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.RateLimiting;

namespace DiagnosticScenarios.Scenarios.Mock;

/// <summary>
/// The endpoints of Microsoft's other diagnostics tutorials (deadlock, high CPU, memory spike and leak,
/// exception), each bounded so one request cannot take the machine down.
/// </summary>
[ApiController]
[Route("api/diagscenario")]
[Produces("text/plain")]
public sealed class DiagnosticsTutorialsController(DeadlockScenario deadlock, MemoryLeakScenario memoryLeak) : ControllerBase
{
    /// <summary>BAD: two threads take two locks in opposite order, then 300 threads queue on the first lock.</summary>
    /// <remarks>
    /// For the debug-deadlock tutorial (dotnet-dump, syncblk). The threads are dedicated, not pool threads,
    /// and the request answers once the deadlock holds. At most one deadlock per process: a second call answers 409 at once.
    /// </remarks>
    [HttpGet("deadlock")]
    [EnableRateLimiting(ScenarioConcurrencyLimits.DeadlockPolicy)]
    [ProducesResponseType(StatusCodes.Status200OK)]
    [ProducesResponseType(StatusCodes.Status409Conflict)]
    public async Task<ActionResult<string>> Deadlock(CancellationToken cancellationToken)
    {
        if (!deadlock.TryStart(out var startedAt))
        {
            return Problem(
                statusCode: StatusCodes.Status409Conflict,
                title: "This process is already deadlocked.",
                detail: $"The deadlock started at {startedAt:O} and holds {DeadlockScenario.WaitingThreads + 2} threads. " +
                        "Inspect it with dotnet-dump (syncblk), then restart the app to start another.");
        }

        await deadlock.WaitUntilDeadlockedAsync(cancellationToken);
        return "success:deadlock";
    }

    /// <summary>BAD (on purpose): one thread spins at 100 % CPU for the given time.</summary>
    /// <param name="milliseconds">How long to spin (1–60000).</param>
    [HttpGet("highcpu/{milliseconds}")]
    [EnableRateLimiting(ScenarioConcurrencyLimits.HighCpuPolicy)]
    public string HighCpu([FromRoute, Range(1, 60_000)] int milliseconds)
    {
        var watch = Stopwatch.StartNew();
        // BAD: spins this thread at 100 % CPU for the whole time; the high-CPU tutorial finds this frame in dotnet-trace.
        while (watch.ElapsedMilliseconds < milliseconds)
        {
        }

        return "success:highcpu";
    }

    /// <summary>BAD (on purpose), for the memory tutorials: allocates and frees millions of objects in waves for the given time.</summary>
    /// <param name="seconds">How long to run the waves (1–300).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away.</param>
    [HttpGet("memspike/{seconds}")]
    [EnableRateLimiting(ScenarioConcurrencyLimits.MemSpikePolicy)]
    public async Task<string> MemSpike([FromRoute, Range(1, 300)] int seconds, CancellationToken cancellationToken)
    {
        var deadline = Stopwatch.StartNew();
        var total = TimeSpan.FromSeconds(seconds);
        var pause = TimeSpan.FromSeconds(Math.Min(5, Math.Max(seconds / 4.0, 0.2)));

        while (deadline.Elapsed < total && !cancellationToken.IsCancellationRequested)
        {
            var wave = new List<Customer>(2_000_000);
            // BAD: two million short-lived objects a wave; the GC heap the memory tutorials watch rises and falls with them.
            for (var i = 0; i < 2_000_000; i++)
            {
                wave.Add(new Customer(Guid.NewGuid().ToString()));
            }

            await Task.Delay(Remaining(deadline, total, pause), CancellationToken.None);
            GC.KeepAlive(wave);
            wave = null;
            GC.Collect();
            await Task.Delay(Remaining(deadline, total, pause), CancellationToken.None);
        }

        return "success:memspike";
    }

    /// <summary>BAD (on purpose): roots about <c>kb</c> kilobytes of Customer objects in a static cache, for the memory-leak tutorial.</summary>
    /// <remarks>The total per process is capped by <c>Scenarios:MemLeakCapKb</c>; past it the call answers 409 and allocates nothing.</remarks>
    /// <param name="kb">Roughly how many kilobytes to leak (1–1000000).</param>
    [HttpGet("memleak/{kb}")]
    [EnableRateLimiting(ScenarioConcurrencyLimits.MemLeakPolicy)]
    [ProducesResponseType(StatusCodes.Status200OK)]
    [ProducesResponseType(StatusCodes.Status409Conflict)]
    public ActionResult<string> MemLeak([FromRoute, Range(1, 1_000_000)] int kb)
    {
        if (!memoryLeak.TryLeak(kb, out var leakedKb, out var capKb))
        {
            return Problem(
                statusCode: StatusCodes.Status409Conflict,
                title: "The memory-leak cap is reached.",
                detail: $"This process already holds {leakedKb} KB of leaked customers; {kb} KB more would pass the cap of {capKb} KB " +
                        "(Scenarios:MemLeakCapKb). Restart the app or raise the cap.");
        }

        return "success:memleak";
    }

    /// <summary>BAD (on purpose): throws <c>Exception("bad, bad code")</c>, answered as a 500 ProblemDetails.</summary>
    [HttpGet("exception")]
    [ProducesResponseType(StatusCodes.Status500InternalServerError)]
    public string Exception()
    {
#pragma warning disable CA2201 // deliberate: the tutorial throws the base Exception type
        // BAD: an unhandled exception; the app answers it with a 500 ProblemDetails.
        throw new Exception("bad, bad code");
#pragma warning restore CA2201
    }

    private static TimeSpan Remaining(Stopwatch deadline, TimeSpan total, TimeSpan pause)
    {
        var left = total - deadline.Elapsed;
        return left <= TimeSpan.Zero ? TimeSpan.Zero : left < pause ? left : pause;
    }
}
