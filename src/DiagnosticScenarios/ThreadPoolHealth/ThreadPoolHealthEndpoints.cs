using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.Controls;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Http.Json;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.ThreadPoolHealth;

/// <summary>The API of the detector and the live page: <c>/api/threadpool</c>, its stream, the workaround and the load control.</summary>
public static class ThreadPoolHealthEndpoints
{
    // A new reader gets the last five minutes at once, so the page's charts start full.
    private const int InitialBacklog = 300;

    public static IEndpointRouteBuilder MapThreadPoolHealthApi(this IEndpointRouteBuilder endpoints)
    {
        // The page's own polling and stream are tooling, not the app's load: left out of the attribution.
        var api = endpoints.MapGroup("/api/threadpool").WithTags("ThreadPoolHealth").WithMetadata(new ExcludeFromAttribution());

        api.MapGet("", (ThreadPoolMonitor monitor) => TypedResults.Ok(monitor.Snapshot()))
            .WithSummary("A snapshot of the thread pool, the queue-delay probe, thread injections by reason, and per-endpoint figures.");

        api.MapGet("/stream", StreamAsync)
            .WithSummary("Server-sent events, one sample a second; send Last-Event-ID (or ?after=) to receive what was missed.");

        api.MapPut("/minthreads", SetMinThreads).RequireControlGate()
            .WithSummary("ThreadPool.SetMinThreads(workers, io) live, the starvation workaround (a control: loopback only, with the X-DiagnosticScenarios-Control header).");

        api.MapDelete("/minthreads", ResetMinThreads).RequireControlGate()
            .WithSummary("Restores the minimum threads the app started with (a control: loopback only, with the X-DiagnosticScenarios-Control header).");

        api.MapGet("/load", (LoadRunLauncher launcher) => TypedResults.Ok(new { launcher.Current, launcher.RunnerPath, LoadRunLauncher.Scenarios }))
            .WithSummary("The load run started from the page, if any, and the scenarios it can target.");

        api.MapPost("/load", StartLoad).RequireControlGate()
            .WithSummary("Starts the load runner as a separate process against a scenario (a control: loopback only, with the X-DiagnosticScenarios-Control header; at most 500 connections and 120 s, one run at a time).");

        api.MapDelete("/load", (LoadRunLauncher launcher) => TypedResults.Ok(launcher.Stop())).RequireControlGate()
            .WithSummary("Stops the load run in progress (a control: loopback only, with the X-DiagnosticScenarios-Control header).");

        return endpoints;
    }

    private static async Task StreamAsync(HttpContext context, ThreadPoolMonitor monitor, IOptions<JsonOptions> json, IHostApplicationLifetime lifetime, string? after)
    {
        if (after is not null && ParseSequence(after) is null)
        {
            await TypedResults.ValidationProblem(new Dictionary<string, string[]> { ["after"] = [$"The value '{after}' is not valid: after must be a whole number from 0."] },
                title: "One or more parameters are not valid.").ExecuteAsync(context);
            return;
        }

        var last = ParseSequence(context.Request.Headers["Last-Event-ID"].ToString()) ?? ParseSequence(after)
            ?? Math.Max(0, monitor.LatestSequence - InitialBacklog);

        context.Response.ContentType = "text/event-stream";
        context.Response.Headers.CacheControl = "no-cache";
        context.Response.Headers["X-Accel-Buffering"] = "no";

        using var stop = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, lifetime.ApplicationStopping);
        try
        {
            // Tells the browser to retry a dropped stream after a second; it then sends Last-Event-ID by itself.
            await context.Response.WriteAsync("retry: 1000\n\n", stop.Token);
            while (!stop.IsCancellationRequested)
            {
                var next = monitor.NextSample();
                foreach (var sample in monitor.SamplesAfter(last))
                {
                    var data = JsonSerializer.Serialize(sample, json.Value.SerializerOptions);
                    await context.Response.WriteAsync($"id: {sample.Sequence}\nevent: sample\ndata: {data}\n\n", stop.Token);
                    last = sample.Sequence;
                }

                await context.Response.Body.FlushAsync(stop.Token);
                await next.WaitAsync(stop.Token);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // The reader left or the app is stopping: the stream simply ends.
        }
    }

    private static IResult SetMinThreads(string? workers, string? io)
    {
        ThreadPool.GetMaxThreads(out var maxWorkers, out var maxIo);
        var current = ThreadPoolMonitor.MinThreads();
        var errors = new Dictionary<string, string[]>(StringComparer.Ordinal);
        var workerCount = ParseCount("workers", workers, 1, maxWorkers, fallback: null, errors);
        var ioCount = ParseCount("io", io, 1, maxIo, fallback: current.Io, errors);
        if (errors.Count > 0)
        {
            return TypedResults.ValidationProblem(errors, detail: string.Join(" ", errors.SelectMany(e => e.Value)), title: "One or more parameters are not valid.");
        }

        var accepted = ThreadPool.SetMinThreads(workerCount, ioCount);
        return TypedResults.Ok(MinThreadsAnswer(accepted, workerCount, ioCount));
    }

    private static Ok<MinThreadsResult> ResetMinThreads(ThreadPoolMonitor monitor)
    {
        var accepted = ThreadPool.SetMinThreads(monitor.StartupMinWorkerThreads, monitor.StartupMinIoThreads);
        return TypedResults.Ok(MinThreadsAnswer(accepted, monitor.StartupMinWorkerThreads, monitor.StartupMinIoThreads));
    }

    // What was asked, whether the runtime took it, and what it reads back: the runtime may refuse
    // (e.g. above the maximum, or when DOTNET_ThreadPool_ForceMinWorkerThreads pins the value).
    private static MinThreadsResult MinThreadsAnswer(bool accepted, int requestedWorkers, int requestedIo)
    {
        var (workers, io) = ThreadPoolMonitor.MinThreads();
        return new MinThreadsResult(accepted, requestedWorkers, requestedIo, workers, io, Environment.ProcessorCount, ThreadPool.ThreadCount);
    }

    private static IResult StartLoad(LoadRunLauncher launcher, IServer server, string? scenario, string? connections, string? durationSeconds)
    {
        var errors = new Dictionary<string, string[]>(StringComparer.Ordinal);
        if (scenario is null || !LoadRunLauncher.Scenarios.Contains(scenario, StringComparer.Ordinal))
        {
            errors["scenario"] = [$"scenario must be one of: {string.Join(", ", LoadRunLauncher.Scenarios)}."];
        }

        var connectionCount = ParseCount("connections", connections, 1, LoadRunLauncher.MaxConnections, fallback: 125, errors);
        var duration = ParseCount("durationSeconds", durationSeconds, 1, LoadRunLauncher.MaxDurationSeconds, fallback: 10, errors);
        if (errors.Count > 0)
        {
            return TypedResults.ValidationProblem(errors, detail: string.Join(" ", errors.SelectMany(e => e.Value)), title: "One or more parameters are not valid.");
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
        catch (FileNotFoundException missing)
        {
            return TypedResults.Problem(statusCode: StatusCodes.Status503ServiceUnavailable, title: "The load runner is not available.", detail: missing.Message);
        }
    }

    private static int ParseCount(string name, string? value, int min, int max, int? fallback, Dictionary<string, string[]> errors)
    {
        if (string.IsNullOrEmpty(value))
        {
            if (fallback is null)
            {
                errors[name] = [$"A value for {name} is required: a whole number from {min} to {max}."];
            }

            return fallback ?? 0;
        }

        if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var count) || count < min || count > max)
        {
            errors[name] = [$"The value '{value}' is not valid: {name} must be a whole number from {min} to {max}."];
        }

        return count;
    }

    private static long? ParseSequence(string? value) =>
        long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var sequence) ? sequence : null;
}

/// <summary>The answer of the workaround: whether the runtime accepted it, and the values it reads back.</summary>
public sealed record MinThreadsResult(bool Accepted, int RequestedWorkers, int RequestedIo, int MinWorkerThreads, int MinIoThreads, int ProcessorCount, int ThreadCount);
