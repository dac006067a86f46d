using System.ComponentModel.DataAnnotations;
using DiagnosticScenarios.Common;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// A call to a slow upstream service over HTTP, the I/O block of the microservice era: the synchronous
/// <c>HttpClient.Send</c> or <c>SendAsync</c>. The upstream answers after <c>delayMs</c> on threads of its own.
/// </summary>
[ApiController]
[Route("api/blocking")]
[Produces("text/plain"), ServiceFilter<UpstreamUnavailableFilter>]
public sealed class HttpClientScenariosController(IHttpClientFactory clients) : ControllerBase
{
    /// <summary>BAD: the synchronous <c>HttpClient.Send</c>; the pool thread waits for the whole call.</summary>
    /// <remarks>
    /// Under load most calls first wait for a new connection, which the handler opens on the pool and waits for with
    /// <c>GetAwaiter().GetResult()</c> inside <c>Send</c>: the pool adds threads for that wait as for <c>.Result</c>, and each
    /// new one blocks too. A call with a connection waits in a socket read.
    /// </remarks>
    /// <param name="delayMs">How long the upstream takes to answer, in milliseconds (0–60000, default 500).</param>
    [HttpGet("httpclient")]
    public string Send([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
        var client = clients.CreateClient(SlowUpstream.ClientName);
        using var request = new HttpRequestMessage(HttpMethod.Get, SlowUpstream.Resource(Delay(delayMs)));
#pragma warning disable DSB001 // deliberate: this endpoint demonstrates the synchronous HttpClient.Send
        // BAD: Send blocks this pool thread until the upstream answers, first for a connection the pool must open, then in a socket read.
        using var response = client.Send(request);
#pragma warning restore DSB001
        response.EnsureSuccessStatusCode();
        return "success:blocking-httpclient";
    }

    /// <summary>GOOD: <c>await SendAsync</c>; no thread is held while the upstream takes its time.</summary>
    /// <param name="delayMs">How long the upstream takes to answer, in milliseconds (0–60000, default 500).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away; the call to the upstream is abandoned with it.</param>
    [HttpGet("httpclient-async")]
    public async Task<string> SendAsync([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
        var client = clients.CreateClient(SlowUpstream.ClientName);
        using var request = new HttpRequestMessage(HttpMethod.Get, SlowUpstream.Resource(Delay(delayMs)));
        // GOOD: await SendAsync instead of Send; that is the one difference.
        using var response = await client.SendAsync(request, cancellationToken);
        response.EnsureSuccessStatusCode();
        return "success:blocking-httpclient-async";
    }

    private static TimeSpan Delay(int? delayMs) => TimeSpan.FromMilliseconds(delayMs ?? BlockingDefaults.HttpClientDelayMs);
}
