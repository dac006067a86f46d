using DiagnosticScenarios.Infrastructure;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.Filters;

namespace DiagnosticScenarios.Blocking;

/// <summary>
/// Turns a failed call to the slow upstream (refused, reset, timed out, or answered with an error status) into a 503
/// ProblemDetails naming the upstream and the cause, as the SQL scenarios do for their database.
/// </summary>
public sealed partial class UpstreamUnavailableFilter(ILogger<UpstreamUnavailableFilter> logger) : IExceptionFilter
{
    /// <summary>Nginx's "client closed request": logged only, nobody is left to read it.</summary>
    private const int ClientClosedRequest = 499;

    public void OnException(ExceptionContext context)
    {
        var error = context.Exception;
        if (context.HttpContext.RequestAborted.IsCancellationRequested && error is OperationCanceledException or HttpRequestException)
        {
            // The client went away and the call to the upstream was abandoned with it: nothing failed.
            context.Result = new StatusCodeResult(ClientClosedRequest);
            context.ExceptionHandled = true;
            return;
        }

        if (error is not (HttpRequestException or TaskCanceledException))
        {
            return;
        }

        var cause = ExceptionCauses.Describe(error);
        LogUnavailable(logger, cause);
        context.Result = new ObjectResult(new ProblemDetails
        {
            Type = "https://tools.ietf.org/html/rfc9110#section-15.6.4",
            Status = StatusCodes.Status503ServiceUnavailable,
            Title = "The slow upstream is not available.",
            Detail = cause,
            Instance = context.HttpContext.Request.Path,
        })
        {
            StatusCode = StatusCodes.Status503ServiceUnavailable,
            ContentTypes = { "application/problem+json" },
        };
        context.ExceptionHandled = true;
    }

    [LoggerMessage(EventId = 5601, Level = LogLevel.Warning, Message = "The slow upstream is not available: {Cause}")]
    private static partial void LogUnavailable(ILogger logger, string cause);
}
