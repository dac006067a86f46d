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
/// run, the latest stack capture and the Prometheus scrape (<c>/metrics</c>). So the page stays live, and opens, while the
/// pool is starved: through Kestrel every sample would wait in the starved queue, seconds at a time. The controls stay on
/// the app itself (they change it); the page calls them there, admitted by the gate and a CORS policy for this origin alone.
/// </summary>
public sealed partial class LivePageServer(
    IOptions<LivePageOptions> options,
    IOptions<OffPoolOptions> limits,
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
    // A stream with nothing new to send writes a comment this often, so a reader that left is noticed and its thread freed.
    private static readonly TimeSpan KeepAlive = TimeSpan.FromSeconds(5);

    private static readonly FileExtensionContentTypeProvider ContentTypes = new();

    private ThreadedHttpServer? _server;

    /// <summary>The page's address (<c>http://localhost:5002/</c>), or null when the server is not listening.</summary>
    public int? Port => _server?.Port;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        var routes = Routes();
        var server = new ThreadedHttpServer("live page", limits.Value.LivePage, exchange => Handle(routes, exchange), logger,
            (request, e) => LogFailed(logger, e, request.Method, request.Path));
        server.SetResponseHeaders(SecurityHeaders.ForPage(controlsAt: null));
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

        // Kestrel's addresses are known once it has started, after this service: then the page may call the controls there.
        lifetime.ApplicationStarted.Register(() =>
        {
            server.SetResponseHeaders(SecurityHeaders.ForPage(ControlsAt()));
            LogListening(logger, server.Port);
        });
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        _server?.Dispose();
        return Task.CompletedTask;
    }

    public void Dispose() => _server?.Dispose();

    private HttpRoutes Routes() => new HttpRoutes()
        .MapGet("/api/threadpool", exchange => Json(exchange, 200, data.Snapshot()))
        .MapGet("/api/threadpool/stream", Stream)
        .MapGet("/api/threadpool/page", exchange => Json(exchange, 200, new PageSettings(ServedOffThePool: true, ControlsAt(), PageUrl(exchange.Request.Header("Host")))))
        .MapGet("/api/threadpool/load", exchange => Json(exchange, 200, data.Load()))
        .MapGet("/api/threadpool/stacks", exchange => Stacks(exchange, _ => data.LatestCapture()))
        // Capture now, the one control served here too: under starvation the app's Kestrel would take it seconds late.
        .Map("POST", "/api/threadpool/stacks", exchange => Stacks(exchange, data.CaptureNow))
        .MapGet("/api/scenarios", exchange => Json(exchange, 200, catalogue))
        .MapGet("/metrics", Metrics);

    private void Handle(HttpRoutes routes, HttpExchange exchange)
    {
        var request = exchange.Request;
        if (!allowedHosts.Allows(request.Header("Host")))
        {
            var refused = HttpExchange.Problem(400, allowedHosts.Refusal(request.Header("Host")), "This Host is not served.");
            refused.Extensions["rule"] = AllowedHosts.Rule;
            exchange.RespondProblem(refused);
            return;
        }

        if (routes.Find(request) is { } handle)
        {
            handle(exchange);
        }
        else if (request.Method is not ("GET" or "HEAD") || routes.MethodsOf(request.Path).Any())
        {
            exchange.RespondProblem(405, $"{request.Path} answers GET here; the controls are on the app itself, {ControlsAt()}.", "Method Not Allowed");
        }
        else
        {
            StaticFile(exchange, request.Path == "/" ? "/index.html" : request.Path);
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

    // A capture behind the control gate, as on the app: the latest (GET) or one taken now (POST), which is held, as a long
    // exchange, until it is taken or its client goes.
    private void Stacks(HttpExchange exchange, Func<Func<bool>, (int Status, object Body)?> answer)
    {
        var request = exchange.Request;
        var control = new ControlRequest(request.RemoteAddress, new HostString(request.Header("Host") ?? ""), "http",
            request.Header(ControlGate.HeaderName) is not null, request.Header("Content-Type"), request.Header("Origin"));
        if (ControlGate.Check(control, gate.CurrentValue, origins) is { } refusal)
        {
            exchange.RespondProblem(refusal.ToProblem(request.Method, request.Path));
            return;
        }

        if (request.Method == "POST" && !exchange.BeginLong())
        {
            return;
        }

        if (answer(exchange.ClientHasGone) is not var (status, body))
        {
            // The client went: no one to answer, and the connection closes.
            return;
        }

        if (body is Microsoft.AspNetCore.Mvc.ProblemDetails problem)
        {
            exchange.RespondProblem(problem);
        }
        else
        {
            Json(exchange, status, body);
        }
    }

    // Read-only like the page's data, and behind the same Host check; no CORS header, so a foreign page cannot read it.
    private void Metrics(HttpExchange exchange)
    {
        if (metrics is null)
        {
            exchange.RespondProblem(404, "The metrics export is off (MetricsExport:Enabled is false).");
        }
        else if (metrics.Collect() is { } text)
        {
            exchange.Respond(200, PrometheusText.ContentType, text);
        }
        else
        {
            exchange.RespondProblem(503, "The metrics were not collected: OpenTelemetry's meter provider has not started, or its collection failed.");
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
            exchange.RespondProblem(ParameterProblem.Details(HealthStream.InvalidAfter(after), request.Path));
            return;
        }

        var last = HealthStream.LastSeen(request.Header("Last-Event-ID"), after, detector.RunId, detector.LatestSequence);
        // Within the server's stream limit; a stream beyond it ends the oldest, whose reader resumes from its Last-Event-ID.
        if (exchange.BeginStream(200, "text/event-stream", ("X-Accel-Buffering", "no")) is not { } stream || request.Method == "HEAD")
        {
            // No room (answered 503), or the head a GET gets and no body: the connection closes after it.
            return;
        }

        var frame = new StringBuilder();
        var first = true;
        try
        {
            // Shed for a newer stream: it ends here, after a whole event, and the reader reconnects.
            while (!lifetime.ApplicationStopping.IsCancellationRequested && !exchange.IsShed)
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
            exchange.RespondProblem(404, $"The live page's server has no {path}; the app's routes are on the app itself, {ControlsAt()}.");
            return;
        }

        using var read = file.CreateReadStream();
        using var content = new MemoryStream();
        read.CopyTo(content);
        exchange.Respond(200, contentType.StartsWith("text/", StringComparison.Ordinal) || contentType.EndsWith("javascript", StringComparison.Ordinal) ? $"{contentType}; charset=utf-8" : contentType,
            content.GetBuffer().AsSpan(0, (int)content.Length));
    }

    private void Json<T>(HttpExchange exchange, int status, T value) =>
        exchange.Respond(status, "application/json; charset=utf-8", JsonSerializer.SerializeToUtf8Bytes(value, json.Value.SerializerOptions));

    [LoggerMessage(EventId = 5401, Level = LogLevel.Information, Message = "Live page: http://localhost:{Port}/ (served on the app's own threads, live while the thread pool starves)")]
    private static partial void LogListening(ILogger logger, int port);

    [LoggerMessage(EventId = 5402, Level = LogLevel.Warning, Message = "The live page's own server could not listen on port {Port} ({Reason}); the app serves the page itself, through the thread pool, so it goes dark while the pool starves. Set LivePage:Port to a free port.")]
    private static partial void LogNotListening(ILogger logger, int port, string reason);

    [LoggerMessage(EventId = 5403, Level = LogLevel.Error, Message = "The live page's own server failed to answer {Method} {Path}; it answered 500 and goes on serving")]
    private static partial void LogFailed(ILogger logger, Exception exception, string method, string path);
}
