using DiagnosticScenarios.PoolHealth.Detection;
using Microsoft.AspNetCore.Http.HttpResults;

namespace DiagnosticScenarios.PoolHealth.Controls;

/// <summary><c>PUT/DELETE /api/threadpool/minthreads</c>: the <c>ThreadPool.SetMinThreads</c> workaround, live.</summary>
internal static class MinThreadsEndpoints
{
    public static void MapMinThreads(this RouteGroupBuilder controls)
    {
        controls.MapPut("/minthreads", SetMinThreads).RequireControlGate()
            .WithSummary("ThreadPool.SetMinThreads(workers, io) live, the starvation workaround (a control: loopback only, with the X-DiagnosticScenarios-Control header).");

        controls.MapDelete("/minthreads", ResetMinThreads).RequireControlGate()
            .WithSummary("Restores the minimum threads the app started with (a control: loopback only, with the X-DiagnosticScenarios-Control header).");
    }

    private static IResult SetMinThreads(string? workers, string? io)
    {
        ThreadPool.GetMaxThreads(out var maxWorkers, out var maxIo);
        var parameters = new ControlParameters();
        var workerCount = parameters.Count("workers", workers, 1, maxWorkers, fallback: null);
        var ioCount = parameters.Count("io", io, 1, maxIo, fallback: MinThreads.Now().Io);
        if (parameters.HasErrors)
        {
            return parameters.Problem();
        }

        var accepted = ThreadPool.SetMinThreads(workerCount, ioCount);
        return TypedResults.Ok(Answer(accepted, workerCount, ioCount));
    }

    private static Ok<MinThreadsResult> ResetMinThreads(StartupMinThreads startup)
    {
        var accepted = ThreadPool.SetMinThreads(startup.Value.Workers, startup.Value.Io);
        return TypedResults.Ok(Answer(accepted, startup.Value.Workers, startup.Value.Io));
    }

    // What was asked, whether the runtime took it, and what it reads back: the runtime may refuse
    // (e.g. above the maximum, or when DOTNET_ThreadPool_ForceMinWorkerThreads pins the value).
    private static MinThreadsResult Answer(bool accepted, int requestedWorkers, int requestedIo)
    {
        var now = MinThreads.Now();
        return new MinThreadsResult(accepted, requestedWorkers, requestedIo, now.Workers, now.Io, Environment.ProcessorCount, ThreadPool.ThreadCount);
    }
}

/// <summary>The minimum threads when the app started, which the reset restores; read when the controls are mapped.</summary>
public sealed class StartupMinThreads
{
    public MinThreads Value { get; } = MinThreads.Now();
}

/// <summary>The answer of the workaround: whether the runtime accepted it, and the values it reads back.</summary>
public sealed record MinThreadsResult(bool Accepted, int RequestedWorkers, int RequestedIo, int MinWorkerThreads, int MinIoThreads, int ProcessorCount, int ThreadCount);
