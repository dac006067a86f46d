using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Load;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>
/// A fresh server process (two processors, cold pool) with pool threads held by requests from this process:
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

    /// <summary>Sends <paramref name="count"/> requests at once that each block a pool thread for <paramref name="delayMs"/>.</summary>
    public void Hold(string scenario, int count, int delayMs)
    {
        for (var i = 0; i < count; i++)
        {
            _requests.Add(SendAsync(scenario, delayMs));
        }
    }

    /// <summary><paramref name="workers"/> loops of requests of <paramref name="delayMs"/> each, until disposed.</summary>
    public void Loop(string scenario, int workers, int delayMs)
    {
        for (var i = 0; i < workers; i++)
        {
            _requests.Add(LoopAsync(scenario, delayMs));
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

    private async Task LoopAsync(string scenario, int delayMs)
    {
        while (!_stop.IsCancellationRequested)
        {
            await SendAsync(scenario, delayMs);
        }
    }

    private async Task SendAsync(string scenario, int delayMs)
    {
        try
        {
            using var response = await _client.GetAsync(new Uri($"api/diagscenario/{scenario}?delayMs={delayMs}", UriKind.Relative), _stop.Token);
        }
        catch (Exception e) when (e is HttpRequestException or OperationCanceledException)
        {
            // The server was killed under the request: the end every held request meets.
        }
    }
}
