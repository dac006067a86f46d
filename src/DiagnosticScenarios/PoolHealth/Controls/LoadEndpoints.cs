using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;

namespace DiagnosticScenarios.PoolHealth.Controls;

/// <summary><c>/api/threadpool/load</c>: the page's load control, which starts the load runner as a process of its own.</summary>
internal static class LoadEndpoints
{
    public static void MapLoad(this RouteGroupBuilder controls)
    {
        controls.MapGet("/load", (LoadRunLauncher launcher) => TypedResults.Ok(launcher.Status()))
            .WithSummary("The load run started from the page, if any, and the scenarios it can target.");

        controls.MapPost("/load", StartLoad).RequireControlGate()
            .WithSummary($"Starts the load runner as a separate process against a scenario (a control: loopback only, with the X-DiagnosticScenarios-Control header; at most {LoadRunLauncher.Limits.MaxConnections} connections and {LoadRunLauncher.Limits.MaxDurationSeconds} s, one run at a time).");

        controls.MapDelete("/load", (LoadRunLauncher launcher) => TypedResults.Ok(launcher.Stop())).RequireControlGate()
            .WithSummary("Stops the load run in progress (a control: loopback only, with the X-DiagnosticScenarios-Control header).");
    }

    private static IResult StartLoad(LoadRunLauncher launcher, IServer server, string? scenario, string? connections, string? durationSeconds)
    {
        var parameters = new ControlParameters();
        if (scenario is null || !LoadRunLauncher.Scenarios.Contains(scenario, StringComparer.Ordinal))
        {
            parameters.Error("scenario", $"scenario must be one of: {string.Join(", ", LoadRunLauncher.Scenarios)}.");
        }

        var limits = LoadRunLauncher.Limits;
        var connectionCount = parameters.Count("connections", connections, 1, limits.MaxConnections, fallback: limits.DefaultConnections);
        var duration = parameters.Count("durationSeconds", durationSeconds, 1, limits.MaxDurationSeconds, fallback: limits.DefaultDurationSeconds);
        if (parameters.HasErrors)
        {
            return parameters.Problem();
        }

        var port = server.Features.Get<IServerAddressesFeature>()?.Addresses
            .Select(a => BindingAddress.Parse(a))
            .FirstOrDefault(a => a.Scheme == "http")?.Port;
        if (port is null)
        {
            return TypedResults.Problem(statusCode: StatusCodes.Status503ServiceUnavailable, title: "The server has no plain HTTP address to load.",
                detail: "The load runner targets this app over http://127.0.0.1; listen on an http:// URL.");
        }

        // Loopback only: the runner loads this app and nothing else.
        var target = new Uri($"http://127.0.0.1:{port}/api/{scenario}");
        try
        {
            var (run, started) = launcher.Start(scenario!, target, connectionCount, duration);
            return started
                ? TypedResults.Accepted("/api/threadpool/load", run)
                : TypedResults.Problem(statusCode: StatusCodes.Status409Conflict, title: "A load run is already in progress.",
                    detail: $"The run on {run.Scenario} (process {run.ProcessId}) started at {run.StartedAt:O}; stop it with DELETE /api/threadpool/load or wait for it.");
        }
        catch (LoadRunnerUnavailableException unavailable)
        {
            return TypedResults.Problem(statusCode: StatusCodes.Status503ServiceUnavailable, title: "The load runner is not available.", detail: unavailable.Message);
        }
    }
}
