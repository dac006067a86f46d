using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Load;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>
/// A fresh server process (two processors, cold pool; this app or a fixture) with pool threads held by requests from this process:
/// either a fixed set of long requests, or loops of short ones (so that waits start while a trace records).
/// Disposing kills the server; the requests in flight then fail, which is what ends them.
/// </summary>
internal sealed class BlockedServer : IAsyncDisposable
{
    private readonly HttpClient _client;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _requests = [];

    private BlockedServer(ServerProcess server)
    {
        Server = server;
        _client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };
    }

    public ServerProcess Server { get; }

    public int ProcessId => Server.ProcessId;

    public HttpClient Client => _client;

    public static async Task<BlockedServer> StartAsync() => new(await LoadExperiment.StartServerAsync());

    /// <summary>Another app (a fixture) started the same way: its own path, its own ready path.</summary>
    public static async Task<BlockedServer> StartAsync(ServerOptions options) =>
        new(await ServerProcess.StartAsync(options).WaitAsync(MeasurementCache.MeasurementTimeout));

    /// <summary>Sends <paramref name="count"/> requests at once that each block a pool thread for <paramref name="delayMs"/>.</summary>
    public void Hold(string scenario, int count, int delayMs)
    {
        for (var i = 0; i < count; i++)
        {
            _requests.Add(SendAsync(ScenarioUri(scenario, delayMs)));
        }
    }

    /// <summary><paramref name="workers"/> loops of requests of <paramref name="delayMs"/> each, until disposed.</summary>
    public void Loop(string scenario, int workers, int delayMs) => Loop(ScenarioUri(scenario, delayMs), workers);

    /// <summary><paramref name="workers"/> loops of requests to <paramref name="relative"/>, until disposed.</summary>
    public void Loop(Uri relative, int workers)
    {
        for (var i = 0; i < workers; i++)
        {
            _requests.Add(LoopAsync(relative));
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await Server.DisposeAsync();
        await Task.WhenAll(_requests).TimeoutAfter(TimeSpan.FromSeconds(10));
        _client.Dispose();
        _stop.Dispose();
    }

    private static Uri ScenarioUri(string scenario, int delayMs) => new($"api/diagscenario/{scenario}?delayMs={delayMs}", UriKind.Relative);

    private async Task LoopAsync(Uri relative)
    {
        while (!_stop.IsCancellationRequested)
        {
            await SendAsync(relative);
        }
    }

    private async Task SendAsync(Uri relative)
    {
        try
        {
            using var response = await _client.GetAsync(relative, _stop.Token);
        }
        catch (Exception e) when (e is HttpRequestException or OperationCanceledException)
        {
            // The server was killed under the request: the end every held request meets.
        }
    }
}
