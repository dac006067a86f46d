using DiagnosticScenarios.Problems;
using Microsoft.AspNetCore.Mvc.Filters;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// Turns a failed call to the slow upstream (refused, reset, timed out, or answered with an error status) into a 503
/// ProblemDetails naming the upstream and the cause, as the SQL scenarios do for their database.
/// </summary>
public sealed partial class UpstreamUnavailableFilter(ILogger<UpstreamUnavailableFilter> logger) : IExceptionFilter
{
    public void OnException(ExceptionContext context)
    {
        var error = context.Exception;
        if (context.HttpContext.RequestAborted.IsCancellationRequested && error is OperationCanceledException or HttpRequestException)
        {
            DependencyFailures.ClientClosed(context);
            return;
        }

        if (error is not (HttpRequestException or TaskCanceledException))
        {
            return;
        }

        var cause = DependencyFailures.Describe(error);
        LogUnavailable(logger, cause);
        DependencyFailures.Unavailable(context, "The slow upstream is not available.", cause);
    }

    [LoggerMessage(EventId = 5601, Level = LogLevel.Warning, Message = "The slow upstream is not available: {Cause}")]
    private static partial void LogUnavailable(ILogger logger, string cause);
}
