using System.Globalization;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.PoolHealth.Metrics;
using DiagnosticScenarios.Problems;
using DiagnosticScenarios.Security;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Json;
using Microsoft.AspNetCore.StaticFiles;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.PoolHealth.LivePage;

/// <summary>
/// The live page and everything it reads, served on threads of the app's own (<see cref="ThreadedHttpServer"/>), never
/// through the thread pool it reports on: the page, <c>/api/threadpool</c>, its event stream, the catalogue, the load
/// run, the latest stack capture and the Prometheus scrape (<c>/metrics</c>). So the page stays live, and opens, while the pool is starved: through Kestrel every
/// sample waited in the starved queue, up to ten seconds and more. The controls stay on the app itself (they change it);
/// the page calls them there, admitted by the gate and a CORS policy for this origin alone.
/// </summary>
public sealed partial class LivePageServer(
    IOptions<LivePageOptions> options,
    IWebHostEnvironment environment,
    IOptions<JsonOptions> json,
    IServer kestrel,
    HealthSampler detector,
    LivePageData data,
    CatalogueAnswer catalogue,
    AppOrigins origins,
    AllowedHosts allowedHosts,
    IOptionsMonitor<ControlGateOptions> gate,
    IHostApplicationLifetime lifetime,
    ILogger<LivePageServer> logger,
    PrometheusScrape? metrics = null) : IHostedService, IDisposable
{
    // A browser opens up to six connections to a page's origin; a few pages and a curl of the stream fit.
    private const int MaxConnections = 32;

    // A stream with nothing new to send writes a comment this often, so a reader that left is noticed and its thread freed.
    private static readonly TimeSpan KeepAlive = TimeSpan.FromSeconds(5);

    private static readonly FileExtensionContentTypeProvider ContentTypes = new();

    private ThreadedHttpServer? _server;

    /// <summary>The page's address (<c>http://localhost:5002/</c>), or null when the server is not listening.</summary>
    public int? Port => _server?.Port;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        var server = new ThreadedHttpServer("live page", MaxConnections, Handle, (request, e) => LogFailed(logger, e, request.Method, request.Path));
        try
        {
            server.Start(options.Value.Port);
        }
        catch (SocketException e)
        {
            server.Dispose();
            LogNotListening(logger, options.Value.Port, e.Message);
            return Task.CompletedTask;
        }

        _server = server;
        origins.LivePageListensOn(server.Port);

        // Kestrel's addresses are known once it has started, after this service.
        lifetime.ApplicationStarted.Register(() => LogListening(logger, server.Port));
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        _server?.Dispose();
        return Task.CompletedTask;
    }

    public void Dispose() => _server?.Dispose();

    private void Handle(HttpExchange exchange)
    {
        var request = exchange.Request;
        if (!allowedHosts.Allows(request.Header("Host")))
        {
            Problem(exchange, 400, "This Host is not served.", allowedHosts.Refusal(request.Header("Host")), ("rule", AllowedHosts.Rule));
            return;
        }

        // Capture now, the one control served here too: under starvation the app's Kestrel would take it seconds late.
        if (request.Method == "POST" && request.Path == "/api/threadpool/stacks")
        {
            Stacks(exchange, () => data.CaptureNow());
            return;
        }

        if (request.Method is not ("GET" or "HEAD"))
        {
            Problem(exchange, 405, "Method Not Allowed", $"{request.Path} answers GET here; the controls are on the app itself, {ControlsAt()}.");
            return;
        }

        switch (request.Path)
        {
            case "/api/threadpool":
                Json(exchange, 200, data.Snapshot());
                break;
            case "/api/threadpool/stream":
                Stream(exchange);
                break;
            case "/api/threadpool/page":
                Json(exchange, 200, new PageSettings(ServedOffThePool: true, ControlsAt(), PageUrl(request.Header("Host"))));
                break;
            case "/api/threadpool/load":
                Json(exchange, 200, data.Load());
                break;
            case "/api/threadpool/stacks":
                Stacks(exchange, data.LatestCapture);
                break;
            case "/api/scenarios":
                Json(exchange, 200, catalogue);
                break;
            case "/metrics":
                Metrics(exchange);
                break;
            default:
                StaticFile(exchange, request.Path == "/" ? "/index.html" : request.Path);
                break;
        }
    }

    /// <summary>The page at <paramref name="host"/>'s name with this server's port, for the redirect from the app's <c>/</c>.</summary>
    public string? PageUrl(string? host)
    {
        if (_server is not { } server)
        {
            return null;
        }

        var name = new HostString(host ?? "localhost").Host;
        return string.Create(CultureInfo.InvariantCulture, $"http://{(name.Contains(':', StringComparison.Ordinal) ? $"[{name.Trim('[', ']')}]" : name)}:{server.Port}/");
    }

    // The app's plain-HTTP address, where the page sends its controls.
    private string ControlsAt() =>
        kestrel.Features.Get<IServerAddressesFeature>()?.Addresses
            .Select(a => BindingAddress.Parse(a))
            .FirstOrDefault(a => a.Scheme == "http") is { } address
            ? string.Create(CultureInfo.InvariantCulture, $"http://{(address.Host is "0.0.0.0" or "[::]" or "+" or "*" ? "localhost" : address.Host)}:{address.Port}")
            : "";

    // A capture behind the control gate, as on the app: the latest (GET) or one taken now (POST).
    private void Stacks(HttpExchange exchange, Func<(int Status, object Body)> answer)
    {
        var request = exchange.Request;
        var control = new ControlRequest(request.RemoteAddress, new HostString(request.Header("Host") ?? ""), "http",
            request.Header(ControlGate.HeaderName) is not null, request.Header("Content-Type"), request.Header("Origin"));
        if (ControlGate.Check(control, gate.CurrentValue, origins) is { } refusal)
        {
            var problem = refusal.ToProblem(request.Method, request.Path);
            Json(exchange, problem.Status!.Value, problem, "application/problem+json");
            return;
        }

        var (status, body) = answer();
        Json(exchange, status, body, status == 200 ? "application/json" : "application/problem+json");
    }

    // Read-only like the page's data, and behind the same Host check; no CORS header, so a foreign page cannot read it.
    private void Metrics(HttpExchange exchange)
    {
        if (metrics is null)
        {
            Problem(exchange, 404, "Not Found", "The metrics export is off (MetricsExport:Enabled is false).");
        }
        else if (metrics.Collect() is { } text)
        {
            exchange.Respond(200, PrometheusText.ContentType, text);
        }
        else
        {
            Problem(exchange, 503, "Service Unavailable", "The metrics were not collected: OpenTelemetry's meter provider has not started, or its collection failed.");
        }
    }

    // Server-sent events as GET /api/threadpool/stream frames them: one `sample` event a second, its run and sequence as the id,
    // so a reader that reconnects with Last-Event-ID (EventSource does) or ?after= gets what it missed.
    private void Stream(HttpExchange exchange)
    {
        var request = exchange.Request;
        var after = Microsoft.AspNetCore.WebUtilities.QueryHelpers.ParseQuery(request.Query).TryGetValue("after", out var values) ? values.ToString() : null;
        if (after is not null && HealthStream.ParseSequence(after) is null)
        {
            Json(exchange, 400, ParameterProblem.Details(HealthStream.InvalidAfter(after), request.Path), "application/problem+json");
            return;
        }

        var last = HealthStream.LastSeen(request.Header("Last-Event-ID"), after, detector.RunId, detector.LatestSequence);
        var stream = exchange.BeginStream(200, "text/event-stream", ("X-Accel-Buffering", "no"));
        if (request.Method == "HEAD")
        {
            // The head a GET gets, and no body: the connection closes after it.
            return;
        }

        var frame = new StringBuilder();
        var first = true;
        try
        {
            while (!lifetime.ApplicationStopping.IsCancellationRequested)
            {
                foreach (var sample in detector.SamplesAfter(last))
                {
                    frame.Clear();
                    if (first)
                    {
                        frame.Append("retry: ").Append(HealthStream.Reconnection.TotalMilliseconds.ToString(CultureInfo.InvariantCulture)).Append('\n');
                        first = false;
                    }

                    frame.Append("event: sample\nid: ").Append(HealthStream.EventId(sample))
                        .Append("\ndata: ").Append(JsonSerializer.Serialize(sample, json.Value.SerializerOptions)).Append("\n\n");
                    stream.Write(Encoding.UTF8.GetBytes(frame.ToString()));
                    last = sample.Sequence;
                }

                stream.Flush();
                if (!detector.WaitForSampleAfter(last, KeepAlive))
                {
                    stream.Write(": keep-alive\n\n"u8);
                }
            }
        }
        catch (IOException)
        {
            // The reader left.
        }
    }

    private void StaticFile(HttpExchange exchange, string path)
    {
        var file = environment.WebRootFileProvider.GetFileInfo(Uri.UnescapeDataString(path));
        if (!file.Exists || file.IsDirectory || !ContentTypes.TryGetContentType(file.Name, out var contentType))
        {
            Problem(exchange, 404, "Not Found", $"The live page's server has no {path}; the app's routes are on the app itself, {ControlsAt()}.");
            return;
        }

        using var read = file.CreateReadStream();
        using var content = new MemoryStream();
        read.CopyTo(content);
        exchange.Respond(200, contentType.StartsWith("text/", StringComparison.Ordinal) || contentType.EndsWith("javascript", StringComparison.Ordinal) ? $"{contentType}; charset=utf-8" : contentType,
            content.GetBuffer().AsSpan(0, (int)content.Length));
    }

    private void Json<T>(HttpExchange exchange, int status, T value, string contentType = "application/json") =>
        exchange.Respond(status, $"{contentType}; charset=utf-8", JsonSerializer.SerializeToUtf8Bytes(value, json.Value.SerializerOptions));

    private void Problem(HttpExchange exchange, int status, string title, string detail, params (string Name, object Value)[] extensions)
    {
        var problem = new Microsoft.AspNetCore.Mvc.ProblemDetails { Status = status, Title = title, Detail = detail, Instance = exchange.Request.Path };
        foreach (var (name, value) in extensions)
        {
            problem.Extensions[name] = value;
        }

        Json(exchange, status, problem, "application/problem+json");
    }

    [LoggerMessage(EventId = 5401, Level = LogLevel.Information, Message = "Live page: http://localhost:{Port}/ (served on the app's own threads, live while the thread pool starves)")]
    private static partial void LogListening(ILogger logger, int port);

    [LoggerMessage(EventId = 5402, Level = LogLevel.Warning, Message = "The live page's own server could not listen on port {Port} ({Reason}); the app serves the page itself, through the thread pool, so it goes dark while the pool starves. Set LivePage:Port to a free port.")]
    private static partial void LogNotListening(ILogger logger, int port, string reason);

    [LoggerMessage(EventId = 5403, Level = LogLevel.Error, Message = "The live page's own server failed to answer {Method} {Path}; it answered 500 and goes on serving")]
    private static partial void LogFailed(ILogger logger, Exception exception, string method, string path);
}
