namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>A <see cref="SharedBrowser"/> started on first use and closed with its owner: the observed runs' browser, or a class's own.</summary>
public sealed class LazyBrowser : IAsyncLifetime
{
    private readonly Lock _lock = new();
    private Task<SharedBrowser>? _started;

    internal Task<SharedBrowser> GetAsync()
    {
        lock (_lock)
        {
            return _started ??= Task.Run(SharedBrowser.Start);
        }
    }

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        Task<SharedBrowser>? started;
        lock (_lock)
        {
            started = _started;
        }

        if (started is null)
        {
            return;
        }

        await ((Task)started).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        if (started.IsCompletedSuccessfully)
        {
            (await started).Dispose();
        }
    }
}
