using System.Globalization;
using System.Web;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.Problems;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Scenarios.Blocking;

/// <summary>
/// The slow service the httpclient pair calls: an HTTP server on loopback that answers <c>GET /slow?delayMs=N</c> after N
/// milliseconds. It runs on threads of its own (a thread per connection), never this app's pool, so it answers on time
/// however starved the pool is, and what the pair measures is the caller's waiting alone.
/// </summary>
/// <param name="limits">Its connections and deadlines (<see cref="OffPoolOptions.SlowUpstream"/>).</param>
/// <param name="logger">Where its server tells of a thread that did not start.</param>
public sealed class SlowUpstream(IOptions<OffPoolOptions> limits, ILogger<SlowUpstream> logger) : IDisposable
{
    /// <summary>The name of the <see cref="HttpClient"/> that calls it (<see cref="IHttpClientFactory"/>).</summary>
    public const string ClientName = "slow-upstream";

    private readonly ThreadedHttpServer _server = new("slow upstream", limits.Value.SlowUpstream,
        exchange => (Routes.Find(exchange.Request) ?? NotFound)(exchange), logger);

    private static readonly HttpRoutes Routes = new HttpRoutes().MapGet("/slow", Answer);

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
        var delay = HttpUtility.ParseQueryString(request.Query)["delayMs"];
        if (!StrictBinding.TryParseWholeNumber(delay, out var delayMs) || delayMs > ScenarioLimits.MaxDelayMs)
        {
            exchange.Respond(400, "text/plain; charset=utf-8", $"delayMs must be a whole number from 0 to {ScenarioLimits.MaxDelayMs}.");
            return;
        }

        Thread.Sleep(delayMs);
        exchange.Respond(200, "text/plain; charset=utf-8", "upstream");
    }

    private static void NotFound(HttpExchange exchange) =>
        exchange.Respond(404, "text/plain; charset=utf-8", "GET /slow?delayMs=N is all this upstream answers.");
}
