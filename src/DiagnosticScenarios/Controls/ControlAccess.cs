using System.Net;
using Microsoft.AspNetCore.Http.HttpResults;

namespace DiagnosticScenarios.Controls;

/// <summary>Who may use the controls: they change how the whole process behaves, so only a developer at the machine.</summary>
internal static class ControlAccess
{
    public static bool IsAllowed(HttpContext context, IHostEnvironment environment) =>
        environment.IsDevelopment() || context.Connection.RemoteIpAddress is { } remote && IPAddress.IsLoopback(remote);

    public static ProblemHttpResult Forbidden(HttpContext context) =>
        TypedResults.Problem(statusCode: StatusCodes.Status403Forbidden, title: "Only from this machine or in Development.",
            detail: $"{context.Request.Method} {context.Request.Path} changes the whole process; it answers loopback clients, or any client when ASPNETCORE_ENVIRONMENT is Development.");
}
