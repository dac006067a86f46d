using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// A fresh server process of a fixture app (two processors, cold pool) with pool threads held by loops of requests from
/// this process, short enough that waits start while a trace records. Disposing kills the server; the requests in flight
/// then fail, which is what ends them.
/// </summary>
internal sealed class BlockedServer : IAsyncDisposable
{
    private readonly HttpClient _client;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _requests = [];
    private readonly List<Uri> _loops = [];
    private readonly System.Collections.Concurrent.ConcurrentDictionary<Uri, int> _answered = new();

    private BlockedServer(ServerProcess server)
    {
        Server = server;
        _client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };
    }

    public ServerProcess Server { get; }

    public int ProcessId => Server.ProcessId;

    /// <summary>The fixture app of <paramref name="options"/>: its own path, its own ready path.</summary>
    public static async Task<BlockedServer> StartAsync(ServerOptions options) =>
        new(await OutOfProcessApp.StartAsync(options));

    /// <summary>
    /// <paramref name="workers"/> loops of requests to <paramref name="relative"/> (GETs unless <paramref name="method"/> says),
    /// until disposed; each loop starts <paramref name="stagger"/> after the one before, so that loops of a route whose
    /// requests block in turn at several calls are not all at the same one at once.
    /// </summary>
    public void Loop(Uri relative, int workers, HttpMethod? method = null, TimeSpan stagger = default)
    {
        _loops.Add(relative);
        for (var i = 0; i < workers; i++)
        {
            _requests.Add(LoopAsync(relative, method ?? HttpMethod.Get, stagger * i));
        }
    }

    /// <summary>
    /// Returns once every looped route has answered a request: each has run its blocking code once, so the threads its
    /// loops hold now are back in it. Fails, naming the routes still silent, when that takes longer than <paramref name="within"/>.
    /// </summary>
    public async Task WhenEveryLoopHasAnsweredAsync(TimeSpan within)
    {
        if (!await Poll.UntilAsync(() => _loops.All(uri => _answered.ContainsKey(uri)), within))
        {
            throw new TimeoutException($"no answer within {within.TotalSeconds:0} s from {string.Join(", ", _loops.Where(uri => !_answered.ContainsKey(uri)))}");
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

    private async Task LoopAsync(Uri relative, HttpMethod method, TimeSpan delay)
    {
        await Task.Delay(delay, _stop.Token).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        while (!_stop.IsCancellationRequested)
        {
            await SendAsync(relative, method);
        }
    }

    private async Task SendAsync(Uri relative, HttpMethod method)
    {
        try
        {
            using var request = new HttpRequestMessage(method, relative);
            using var response = await _client.SendAsync(request, _stop.Token);
            _answered.AddOrUpdate(relative, 1, (_, count) => count + 1);
        }
        catch (Exception e) when (e is HttpRequestException or OperationCanceledException)
        {
            // The server was killed under the request: the end every held request meets.
        }
    }
}
