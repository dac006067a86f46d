using System.Data.Common;
using DiagnosticScenarios.Problems;
using Microsoft.AspNetCore.Mvc.Filters;

namespace DiagnosticScenarios.Scenarios.Sql;

/// <summary>
/// Turns a database failure (down, unreachable, mis-configured, pool exhausted) into a 503 ProblemDetails that names
/// the provider and the cause, and clears the pool so the scenarios recover by themselves when the database is back.
/// </summary>
public sealed partial class DatabaseUnavailableFilter(SqlScenarioDatabase database, ILogger<DatabaseUnavailableFilter> logger) : IExceptionFilter
{
    public void OnException(ExceptionContext context)
    {
        var error = context.Exception is AggregateException { InnerExceptions: [var inner] } ? inner : context.Exception;
        if (context.HttpContext.RequestAborted.IsCancellationRequested && error is DbException or OperationCanceledException)
        {
            // The client went away and the driver cancelled the command on the server: nothing failed.
            DependencyFailures.ClientClosed(context);
            return;
        }

        if (!IsDatabaseFailure(error))
        {
            return;
        }

        var provider = database.Provider.ToString();
        var cause = DependencyFailures.Describe(error);
        LogUnavailable(logger, provider, cause);
        if (error is not DatabaseConfigurationException)
        {
            database.ClearPool();
        }

        context.HttpContext.Response.Headers.RetryAfter = SqlScenarioDatabase.ConnectTimeoutSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture);
        DependencyFailures.Unavailable(context, $"The {provider} database is not available.", cause, new Dictionary<string, object?> { ["provider"] = provider });
    }

    // SqlClient reports "no connection free in the pool" as InvalidOperationException, not as a SqlException.
    private static bool IsDatabaseFailure(Exception error) =>
        error is DbException or TimeoutException or DatabaseConfigurationException
        || (error is InvalidOperationException && error.Message.Contains("connection from the pool", StringComparison.Ordinal))
        || (error is InvalidOperationException && error.InnerException is DbException);

    [LoggerMessage(EventId = 5501, Level = LogLevel.Warning, Message = "The {Provider} database is not available: {Cause}")]
    private static partial void LogUnavailable(ILogger logger, string provider, string cause);
}
