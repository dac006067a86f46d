using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// Reading the request body from a client that uploads it slowly (a phone on a poor network, a large form): synchronously,
/// with Kestrel's guard against that switched off for the request, or asynchronously. POST any body up to
/// <see cref="BlockingDefaults.BodyReadMaxBytes"/>; the answer comes once the last byte has arrived. The wait is the
/// client's upload, so this pair takes no <c>delayMs</c>.
/// </summary>
[ApiController]
[RequestSizeLimit(BlockingDefaults.BodyReadMaxBytes)]
[Route("api/blocking")]
[Produces("text/plain")]
public sealed class BodyReadScenariosController : ControllerBase
{
    /// <summary>BAD: reads the body with the synchronous <c>StreamReader.ReadToEnd</c>, parking a pool thread for the whole upload.</summary>
    /// <remarks>
    /// Kestrel refuses synchronous body reads unless <c>AllowSynchronousIO</c> is set, and this action sets it for its request:
    /// the switch real apps flip to make old code "work".
    /// </remarks>
    [HttpPost("bodyread")]
    public string BodyRead()
    {
        // The switch real apps flip to make old synchronous code "work": without it Kestrel throws on the read below.
        HttpContext.Features.GetRequiredFeature<IHttpBodyControlFeature>().AllowSynchronousIO = true;
        using var reader = new StreamReader(Request.Body);
#pragma warning disable DSB001 // deliberate: this endpoint demonstrates a synchronous body read
        // BAD: ReadToEnd parks this pool thread until the slow client has sent its last byte.
        _ = reader.ReadToEnd();
#pragma warning restore DSB001
        return "success:blocking-bodyread";
    }

    /// <summary>GOOD: reads the body with <c>await ReadToEndAsync</c>; no thread is held between the pieces of the upload.</summary>
    /// <param name="cancellationToken">Cancelled when the client goes away in the middle of its upload.</param>
    [HttpPost("bodyread-async")]
    public async Task<string> BodyReadAsync(CancellationToken cancellationToken)
    {
        using var reader = new StreamReader(Request.Body);
        // GOOD: await ReadToEndAsync instead of ReadToEnd, so Kestrel needs no switch; that is the one difference.
        _ = await reader.ReadToEndAsync(cancellationToken);
        return "success:blocking-bodyread-async";
    }
}
