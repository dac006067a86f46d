using System.Diagnostics;

namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>
/// Times each routed request and how long it held its thread. The hold ends when the rest of the pipeline
/// first hands back a task that has not completed: until then this thread ran the request synchronously,
/// whether it computed or blocked. A sync action that blocks (taskwait, tasksleepwait, syncio) holds it for
/// the whole query; an action that awaits (taskasyncwait) hands it back within a millisecond.
/// <c>await Task.Run(blocking)</c> (taskrunwait) frees the request thread while it blocks another one, which
/// this measure cannot attribute; the queue delay still shows its effect.
/// </summary>
/// <remarks>
/// On every request, so it is kept cheap: the endpoint's figures are found by reference, the meter's tag is cached
/// per endpoint, a completion takes one lock of the stripe of its core, and a request that completes
/// without yielding goes through no async state machine.
/// </remarks>
internal sealed class EndpointAttributionMiddleware(RequestDelegate next, EndpointAttribution attribution, HealthMetrics metrics)
{
    public Task InvokeAsync(HttpContext context) =>
        context.GetEndpoint() is { } endpoint && attribution.For(endpoint) is { } stats
            ? TimeAsync(context, stats)
            : next(context);

    private Task TimeAsync(HttpContext context, EndpointStats stats)
    {
        var started = Stopwatch.GetTimestamp();
        stats.Entered();

        // While the request holds this thread, a stack capture names its route, whatever the JIT inlined.
        var thread = RequestThreads.Current;
        thread.Enter(context.Request.Method, stats.Route, attribution.LabelOf(context.GetEndpoint()!));
        Task pipeline;
        try
        {
            pipeline = next(context);
        }
#pragma warning disable CA1031 // deliberate: the exception is rethrown by the await below, after the figures are recorded
        catch (Exception exception)
#pragma warning restore CA1031
        {
            pipeline = Task.FromException(exception);
        }

        // Reached on return from next(): either the request is done or it has just yielded its thread.
        thread.Leave();
        var yielded = Stopwatch.GetTimestamp();
        stats.Yielded();
        var holdMs = Stopwatch.GetElapsedTime(started, yielded).TotalMilliseconds;
        if (pipeline.IsCompletedSuccessfully)
        {
            // Done without yielding: it finished when it handed back.
            Completed(stats, started, yielded, holdMs);
            return Task.CompletedTask;
        }

        return CompletedAsync(pipeline, stats, started, holdMs);
    }

    private async Task CompletedAsync(Task pipeline, EndpointStats stats, long started, double holdMs)
    {
        try
        {
#pragma warning disable VSTHRD003 // deliberate: the rest of this request's pipeline, started just above on the same request
            await pipeline;
#pragma warning restore VSTHRD003
        }
        finally
        {
            Completed(stats, started, Stopwatch.GetTimestamp(), holdMs);
        }
    }

    private void Completed(EndpointStats stats, long started, long finished, double holdMs)
    {
        stats.Completed(finished, Stopwatch.GetElapsedTime(started, finished).TotalMilliseconds, holdMs);
        metrics.RecordHoldTime(stats.RouteTag, holdMs);
    }
}
