using System.ComponentModel.DataAnnotations;
using DiagnosticScenarios.Common;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// Blocking that comes and goes: one request in <c>every</c> reads <c>.Result</c>, the rest await the same query, as when
/// one rarely taken branch (a cache miss, a token refresh) still blocks. Its GOOD twin is <c>taskasyncwait</c>.
/// </summary>
[ApiController]
[Route("api/blocking")]
[Produces("text/plain")]
public sealed class IntermittentScenarioController(MockDatabase database, IOptions<ScenarioOptions> options) : ControllerBase
{
    private const int MaxEvery = 1_000_000;

    private static long _requests;

    /// <summary>BAD, now and then: one request in <c>every</c> parks its pool thread on <c>.Result</c>; the others await.</summary>
    /// <remarks>
    /// At any moment few threads are parked, so a single stack snapshot may find none of them; a wait trace over a few
    /// seconds (dotnet-trace's waithandle events) records every one.
    /// </remarks>
    /// <param name="delayMs">How long the mock database takes to answer, in milliseconds (0–60000, default 500).</param>
    /// <param name="every">One request in this many blocks (1–1000000, default 500).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away.</param>
    [HttpGet("intermittent")]
    public async Task<string> Intermittent(
        [FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs,
        [FromQuery, Range(1, MaxEvery)] int? every,
        CancellationToken cancellationToken)
    {
        // The mock query's delay (Scenarios:MockDelayMs), as for its twin taskasyncwait.
        var delay = TimeSpan.FromMilliseconds(delayMs ?? options.Value.MockDelayMs);
        if (Interlocked.Increment(ref _requests) % (every ?? BlockingDefaults.IntermittentEvery) == 0)
        {
#pragma warning disable VSTHRD103, DSB002 // deliberate: this branch demonstrates sync-over-async that only some requests take
            // BAD: this request parks its pool thread on .Result for the whole query; one in every, so it comes and goes.
            _ = database.QueryAsync(delay, cancellationToken).Result;
#pragma warning restore VSTHRD103, DSB002
        }
        else
        {
            await database.QueryAsync(delay, cancellationToken);
        }

        return "success:blocking-intermittent";
    }
}
