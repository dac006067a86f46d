using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// Something that watches an observed run: it attaches to the fresh server before the load starts and, once the run is
/// over, stops and hands back its record. A Prometheus server scraping the app, the diagnosis CLI's <c>watch</c> or a
/// dotnet-trace session are each one more of these.
/// </summary>
internal interface IRunObserver
{
    /// <summary>For messages: which observer failed or is missing.</summary>
    string Name { get; }

    /// <summary>Returns once the observer sees the server (its stream open, its session recording, its page drawn).</summary>
    Task<IObservation> AttachAsync(RunContext run);
}

/// <summary>An attached observer.</summary>
internal interface IObservation
{
    /// <summary>Stops observing and returns what was seen; called once the load is over, before the server goes.</summary>
    Task<object> StopAsync();
}

/// <summary>An observation that starts the load itself, as a person would (the page's Start load button).</summary>
internal interface ILoadStarter
{
    /// <summary>Starts the plan's load and returns once the app has accepted it; says how.</summary>
    Task<string> StartLoadAsync(RunPlan plan);
}

/// <summary>What observers of one run share: the server, its two addresses, and when the load started.</summary>
internal sealed class RunContext(RunPlan plan, ServerProcess server, Uri livePage, CancellationToken stopping)
{
    private readonly TaskCompletionSource<DateTimeOffset> _loadStarted = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public RunPlan Plan { get; } = plan;

    public ServerProcess Server { get; } = server;

    /// <summary>The app itself (Kestrel, through its thread pool): the scenarios and the controls.</summary>
    public Uri App => Server.BaseAddress;

    /// <summary>The live page's own server (threads of the app's own), as the app reports it in <c>GET /api/threadpool/page</c>.</summary>
    public Uri LivePage { get; } = livePage;

    /// <summary>Cancelled when the run is over and its observers are about to be stopped.</summary>
    public CancellationToken Stopping { get; } = stopping;

    /// <summary>Completes with when the runner started, as the app reports it (the time the page marks).</summary>
    public Task<DateTimeOffset> WaitForLoadStartAsync()
    {
#pragma warning disable VSTHRD003 // deliberate: the run completes it once, with continuations forced off its thread
        return _loadStarted.Task;
#pragma warning restore VSTHRD003
    }

    public void LoadHasStarted(DateTimeOffset at) => _loadStarted.TrySetResult(at);

    public void LoadNeverStarted(Exception reason) => _loadStarted.TrySetException(reason);
}
