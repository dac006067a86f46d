using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.Filters;
using Microsoft.AspNetCore.Mvc.Infrastructure;

namespace DiagnosticScenarios.Problems;

/// <summary>
/// What a scenario's failed dependency (the SQL database, the slow upstream) answers, written once for their exception
/// filters: a 503 ProblemDetails naming which and why, or, when the client has gone, a 499 nobody reads.
/// </summary>
public static class DependencyFailures
{
    /// <summary>Nginx's "client closed request": logged only, nobody is left to read it.</summary>
    private const int ClientClosedRequest = 499;

    /// <summary>
    /// The messages from the outermost exception in, joined by colons, each once: a driver's own message often names only
    /// the address, and the socket's reason ("Connection refused") is the innermost.
    /// </summary>
    public static string Describe(Exception error)
    {
        ArgumentNullException.ThrowIfNull(error);
        var messages = new List<string>();
        for (var e = error; e is not null; e = e.InnerException)
        {
            if (!messages.Any(m => m.Contains(e.Message, StringComparison.Ordinal)))
            {
                messages.Add(e.Message.TrimEnd('.'));
            }
        }

        return string.Join(": ", messages) + ".";
    }

    /// <summary>The client went away and the call was abandoned with it: nothing failed.</summary>
    public static void ClientClosed(ExceptionContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        context.Result = new StatusCodeResult(ClientClosedRequest);
        context.ExceptionHandled = true;
    }

    /// <summary>
    /// The 503 ProblemDetails: <paramref name="title"/> names the dependency, <paramref name="cause"/> says why. Made by MVC's
    /// <see cref="ProblemDetailsFactory"/>, which applies the app's ProblemDetails customization
    /// (<see cref="ProblemDetailsSetup.AddScenarioControllers"/>), so it carries the type, instance and trace id every other
    /// problem of the app does.
    /// </summary>
    public static void Unavailable(ExceptionContext context, string title, string cause, IDictionary<string, object?>? extensions = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        var http = context.HttpContext;
        var problem = http.RequestServices.GetRequiredService<ProblemDetailsFactory>()
            .CreateProblemDetails(http, StatusCodes.Status503ServiceUnavailable, title, detail: cause);
        foreach (var (key, value) in extensions ?? Enumerable.Empty<KeyValuePair<string, object?>>())
        {
            problem.Extensions[key] = value;
        }

        context.Result = new ObjectResult(problem)
        {
            StatusCode = StatusCodes.Status503ServiceUnavailable,
            ContentTypes = { "application/problem+json" },
        };
        context.ExceptionHandled = true;
    }
}
