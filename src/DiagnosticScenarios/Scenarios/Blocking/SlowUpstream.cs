using System.Globalization;
using System.Web;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.Problems;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// The slow service the httpclient pair calls: an HTTP server on loopback that answers <c>GET /slow?delayMs=N</c> after N
/// milliseconds. It runs on threads of its own (a thread per connection), never this app's pool, so it answers on time
/// however starved the pool is, and what the pair measures is the caller's waiting alone.
/// </summary>
public sealed class SlowUpstream : IDisposable
{
    /// <summary>The name of the <see cref="HttpClient"/> that calls it (<see cref="IHttpClientFactory"/>).</summary>
    public const string ClientName = "slow-upstream";

    // Above 125 connections and whatever the load runner's page control allows (500), with room for connections that close late.
    private const int MaxConnections = 1024;
    private readonly ThreadedHttpServer _server = new("slow upstream", MaxConnections, Answer);

    /// <summary><c>http://127.0.0.1:{port}/</c>, once started.</summary>
    public Uri? BaseAddress { get; private set; }

    /// <summary>Listens on a free loopback port.</summary>
    public void Start()
    {
        _server.Start(port: 0);
        BaseAddress = new Uri(string.Create(CultureInfo.InvariantCulture, $"http://127.0.0.1:{_server.Port}/"));
    }

    /// <summary>The resource that answers after <paramref name="delay"/>, relative to <see cref="BaseAddress"/>.</summary>
    public static Uri Resource(TimeSpan delay) =>
        new(string.Create(CultureInfo.InvariantCulture, $"slow?delayMs={(long)delay.TotalMilliseconds}"), UriKind.Relative);

    public void Dispose() => _server.Dispose();

    // On the connection's own thread: sleeping here holds none of the app's threads.
    private static void Answer(HttpExchange exchange)
    {
        var request = exchange.Request;
        if (request.Path != "/slow" || request.Method != "GET")
        {
            exchange.Respond(404, "text/plain; charset=utf-8", "GET /slow?delayMs=N is all this upstream answers.");
            return;
        }

        var delay = HttpUtility.ParseQueryString(request.Query)["delayMs"];
        if (!StrictBinding.TryParseWholeNumber(delay, out var delayMs) || delayMs > ScenarioLimits.MaxDelayMs)
        {
            exchange.Respond(400, "text/plain; charset=utf-8", $"delayMs must be a whole number from 0 to {ScenarioLimits.MaxDelayMs}.");
            return;
        }

        Thread.Sleep(delayMs);
        exchange.Respond(200, "text/plain; charset=utf-8", "upstream");
    }
}
