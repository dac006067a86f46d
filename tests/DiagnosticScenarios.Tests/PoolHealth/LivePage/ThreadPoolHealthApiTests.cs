using System.Globalization;
using System.Net;
using System.Net.Http.Json;
using System.Net.ServerSentEvents;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.PoolHealth.Detection;
using DiagnosticScenarios.PoolHealth.LivePage;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.LivePage;

[StartsEarly("a server of its own, the sampler's seconds and a connection left idle for 8.5 s: 11–14 s")]
public sealed class ThreadPoolHealthApiTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task Snapshot_ReportsTheProcessorsAndWorkerLimitsItsProcessWasStartedWith()
    {
        // A process of its own whose pool the test sets from outside: every figure checked is one the test chose, not one
        // read back through the ThreadPool calls the API itself makes.
        await using var server = await OutOfProcessApp.StartAsync(o => o with
        {
            ProcessorCount = 3,
            MinWorkerThreads = 40,
            ExtraEnvironment = new Dictionary<string, string> { ["DOTNET_ThreadPool_ForceMaxWorkerThreads"] = 100.ToString("X", CultureInfo.InvariantCulture) },
        });
        using var client = new HttpClient { BaseAddress = server.BaseAddress };

        var snapshot = await ThreadPoolApi.ShowsAsync(client, s => s.GetProperty("queueDelay").GetProperty("window").GetProperty("count").GetInt32() >= 3);

        Assert.Equal(3, snapshot.GetProperty("processorCount").GetInt32());
        Assert.Equal(40, snapshot.GetProperty("minWorkerThreads").GetInt32());
        Assert.Equal(100, snapshot.GetProperty("maxWorkerThreads").GetInt32());
    }

    [Fact]
    public async Task Stream_ReplaysEverySampleAfterLastEventId_ThenGoesOnLiveWithoutAGap()
    {
        using var client = _app.CreateClient();
        // A reader that last saw sample 1 while several more are in the ring (one a second).
        var run = await RunIdAsync(client);
        var latest = Sequence(await ThreadPoolApi.ShowsAsync(client, s => Sequence(s) >= 4));

        var (mediaType, events) = await ReconnectAsync(client, $"{run}-1", last: e => SequenceOf(e) > latest);

        // Every sample from 2 to the latest the API showed, then the next one, whether replayed or sent live.
        Assert.Equal("text/event-stream", mediaType);
        Assert.Equal(Enumerable.Range(2, (int)latest).Select(i => $"{run}-{i}"), events.Select(e => e.EventId));
    }

    // A page left open while the app restarted: its browser reconnects with the old run's id, whose sequence says nothing
    // about this run's (here one this run has passed, so a rule that read only the sequence would skip this run's first).
    [Fact]
    public async Task Stream_TreatsALastEventIdOfAnotherRunAsANewReader_AndSendsThisRunsSamplesFromTheFirst()
    {
        using var client = _app.CreateClient();
        var run = await RunIdAsync(client);
        var latest = Sequence(await ThreadPoolApi.ShowsAsync(client, s => Sequence(s) >= 3));

        var (_, events) = await ReconnectAsync(client, $"{run - 60_000}-2", last: e => SequenceOf(e) >= latest);

        // This run's backlog from its first sample, as for a new reader.
        Assert.Equal($"{run}-1", events[0].EventId);
    }

    [Fact]
    public async Task Stream_FramesEachSampleWithItsRunAndSequenceAsTheEventId_AndAsksForRetryAfterASecond()
    {
        // TypedResults.ServerSentEvents writes the frames; an RC of .NET 10 left out the id line (aspnetcore#64183),
        // without which the browser sends no Last-Event-ID and a reconnect loses what it missed.
        using var client = _app.CreateClient();
        await ThreadPoolApi.ShowsAsync(client, s => Sequence(s) >= 1);
        using var request = new HttpRequestMessage(HttpMethod.Get, "/api/threadpool/stream?after=0");

        using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).DefaultTimeout();
        var (events, parser) = await ReadEventsAsync(response, last: _ => true);

        var first = Assert.Single(events);
        Assert.Equal("sample", first.EventType);
        using var data = JsonDocument.Parse(first.Data);
        var run = data.RootElement.GetProperty("runId").GetInt64();
        Assert.InRange(run, DateTimeOffset.UtcNow.AddHours(-1).ToUnixTimeMilliseconds(), DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        Assert.Equal(1, data.RootElement.GetProperty("sequence").GetInt64());
        Assert.Equal($"{run}-1", first.EventId);
        Assert.Equal(TimeSpan.FromSeconds(1), parser.ReconnectionInterval);
    }

    // Capture now is the one control the page's own server takes (the page sends it there, off the starved pool), behind
    // the same gate as on the app; every other POST there is a 405 pointing at the app. A capture taken through it is the
    // browser's (LivePageFallbackTests) and the starved run's (StackCaptureTests).
    [Fact]
    public async Task LivePageServer_RefusesCaptureNowWithoutTheControlHeader_AndEveryOtherPost()
    {
        var port = _app.Services.GetRequiredService<LivePageServer>().Port!.Value;
        using var page = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}/"), Timeout = TimeoutExtensions.Default };

        using var withoutHeader = await page.PostAsync(new Uri("api/threadpool/stacks", UriKind.Relative), content: null).DefaultTimeout();
        using var otherPost = await page.PostAsync(new Uri("api/threadpool/load", UriKind.Relative), content: null).DefaultTimeout();

        var refused = await ProblemDetailsAssert.IsProblemAsync(withoutHeader, HttpStatusCode.Forbidden);
        Assert.Equal("preflight", refused.GetProperty("rule").GetString());
        await ProblemDetailsAssert.IsProblemAsync(otherPost, HttpStatusCode.MethodNotAllowed);
    }

    [Fact]
    public async Task LivePageStream_AnswersHead_WithTheHeadAlone_AndClosesTheConnection()
    {
        var port = _app.Services.GetRequiredService<LivePageServer>().Port!.Value;
        await ThreadPoolApi.ShowsAsync(_app.CreateClient(), s => Sequence(s) >= 1);
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, port).DefaultTimeout();
        await socket.SendAsync(Encoding.ASCII.GetBytes($"HEAD /api/threadpool/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n")).DefaultTimeout();

        // HttpClient reads no body after a HEAD, whatever the server sends: the socket shows what was sent, to its close.
        var received = new StringBuilder();
        var buffer = new byte[4096];
        using var giveUp = new CancellationTokenSource(TimeSpan.FromSeconds(3));
        try
        {
            int read;
            while ((read = await socket.ReceiveAsync(buffer, giveUp.Token)) > 0)
            {
                received.Append(Encoding.ASCII.GetString(buffer, 0, read));
            }
        }
        catch (OperationCanceledException)
        {
        }

        var text = received.ToString();
        Assert.True(giveUp.IsCancellationRequested is false, $"the connection was still open 3 s after the HEAD, having sent {text.Length} characters:\n{text[..Math.Min(text.Length, 600)]}");
        Assert.StartsWith("HTTP/1.1 200 ", text, StringComparison.Ordinal);
        Assert.Contains("Content-Type: text/event-stream", text, StringComparison.OrdinalIgnoreCase);
        Assert.EndsWith("\r\n\r\n", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("workers=abc")]
    [InlineData("workers=0")]
    [InlineData("workers=99999999")]
    [InlineData("")]
    public async Task MinThreads_Returns400ProblemDetails_WhenWorkersIsNotAValidCount(string query)
    {
        using var client = _app.CreateControlClient();

        using var response = await client.PutAsync(new Uri($"/api/threadpool/minthreads?{query}", UriKind.Relative), null).DefaultTimeout();
        var problem = await response.Content.ReadFromJsonAsync<JsonElement>().DefaultTimeout();

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.True(problem.GetProperty("errors").TryGetProperty("workers", out _));
        Assert.Contains("a whole number from 1 to", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("scenario=../../etc/passwd")]
    [InlineData("scenario=diagscenario/taskwait&connections=501")]
    [InlineData("scenario=diagscenario/taskwait&durationSeconds=121")]
    public async Task Load_Returns400ProblemDetails_WhenOutOfBounds(string query)
    {
        using var client = _app.CreateControlClient();

        using var response = await client.PostAsync(new Uri($"/api/threadpool/load?{query}", UriKind.Relative), null).DefaultTimeout();

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
    }

    [Fact]
    public async Task Root_LeadsToThePageOnItsOwnServer_WhichServesItWithItsScriptAndNoExternalReferences()
    {
        using var appClient = _app.CreateClient(new WebApplicationFactoryClientOptions { AllowAutoRedirect = false });
        using var root = await appClient.GetAsync(new Uri("/", UriKind.Relative)).DefaultTimeout();
        var page = root.Headers.Location ?? throw new InvalidOperationException($"/ answered {(int)root.StatusCode} without a Location");
        // The live page's server is a real loopback listener, not the test server.
        using var browser = new HttpClient { BaseAddress = page };

        var html = await browser.GetStringAsync(page).DefaultTimeout();
        var script = await browser.GetStringAsync(new Uri("/app.js", UriKind.Relative)).DefaultTimeout();
        var settings = await browser.GetFromJsonAsync<JsonElement>(new Uri("/api/threadpool/page", UriKind.Relative)).DefaultTimeout();

        Assert.Equal(HttpStatusCode.Redirect, root.StatusCode);
        Assert.True(settings.GetProperty("servedOffThePool").GetBoolean(), settings.ToString());

        Assert.Contains("<canvas id=\"chart-queue-delay\"", html, StringComparison.Ordinal);
        Assert.DoesNotContain("https://", html, StringComparison.Ordinal);
        Assert.DoesNotContain("https://", script, StringComparison.Ordinal);
        Assert.Contains("/api/threadpool/stream", script, StringComparison.Ordinal);
    }

    // The server closes a kept-alive connection idle for its timeout: a client that reused one just then would have its
    // request reset. .NET's HttpClient retires a connection a second before the Keep-Alive timeout a server gives.
    [Fact]
    public async Task LivePageServer_KeepsConnectionsAlive_WithAKeepAliveTimeoutHeaderNamingItsIdleTimeout()
    {
        using var appClient = _app.CreateClient(new WebApplicationFactoryClientOptions { AllowAutoRedirect = false });
        using var root = await appClient.GetAsync(new Uri("/", UriKind.Relative)).DefaultTimeout();
        using var browser = new HttpClient { BaseAddress = root.Headers.Location };

        using var settings = await browser.GetAsync(new Uri("/api/threadpool/page", UriKind.Relative)).DefaultTimeout();

        Assert.Contains("keep-alive", settings.Headers.Connection);
        Assert.Equal(string.Create(CultureInfo.InvariantCulture, $"timeout={new OffPoolOptions().LivePage.IdleTimeout.TotalSeconds:0}"), string.Join(",", settings.Headers.GetValues("Keep-Alive")));
    }

    // What the header promises, kept: a connection left idle for most of the announced timeout still answers. The wait is
    // the test's subject, a fixed interval by nature: a second and a half short of the timeout, where .NET's client, which
    // retires a connection a second early, would still use it.
    [Fact]
    public async Task LivePageServer_AnswersOnTheSameConnection_AfterItLayIdleForMostOfTheAnnouncedTimeout()
    {
        using var appClient = _app.CreateClient(new WebApplicationFactoryClientOptions { AllowAutoRedirect = false });
        using var root = await appClient.GetAsync(new Uri("/", UriKind.Relative)).DefaultTimeout();
        var connections = 0;
        using var handler = new SocketsHttpHandler
        {
            MaxConnectionsPerServer = 1,
            ConnectCallback = async (context, cancellationToken) =>
            {
                Interlocked.Increment(ref connections);
                var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                await socket.ConnectAsync(context.DnsEndPoint, cancellationToken);
                return new NetworkStream(socket, ownsSocket: true);
            },
        };
        using var browser = new HttpClient(handler) { BaseAddress = root.Headers.Location };

        using var first = await browser.GetAsync(new Uri("/api/threadpool/page", UriKind.Relative)).DefaultTimeout();
        var announced = TimeSpan.FromSeconds(int.Parse(first.Headers.GetValues("Keep-Alive").Single()["timeout=".Length..], CultureInfo.InvariantCulture));
        await Task.Delay(announced - TimeSpan.FromSeconds(1.5));
        using var second = await browser.GetAsync(new Uri("/api/threadpool/page", UriKind.Relative)).DefaultTimeout();

        Assert.Equal((HttpStatusCode.OK, HttpStatusCode.OK), (first.StatusCode, second.StatusCode));
        Assert.True(connections == 1, $"{connections} connections: the server closed the first after less than {announced.TotalSeconds - 1.5} s idle, though it announced {announced.TotalSeconds} s");
    }

    [Fact]
    public async Task EveryThreadPoolRoute_IsUnmapped_WhenThreadPoolHealthIsDisabled()
    {
        await using var disabled = _app.With(("ThreadPoolHealth:Enabled", "false"));
        using var client = disabled.CreateClient();

        using var api = await client.GetAsync(new Uri("/api/threadpool", UriKind.Relative)).DefaultTimeout();
        var ping = await client.GetStringAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();
        var mapped = disabled.Services.GetRequiredService<EndpointDataSource>().Endpoints.OfType<RouteEndpoint>()
            .Select(e => e.RoutePattern.RawText ?? "")
            .Where(route => route.TrimStart('/').StartsWith("api/threadpool", StringComparison.Ordinal))
            .ToList();

        Assert.Empty(mapped);
        Assert.Equal(HttpStatusCode.NotFound, api.StatusCode);
        Assert.Equal("success:ping", ping);
        Assert.Null(disabled.Services.GetService<HealthSampler>());
    }


    // The sample the detector recorded last, as the API shows it (0 before the first).
    private static long Sequence(JsonElement snapshot) => snapshot.GetProperty("starvation").GetProperty("sequence").GetInt64();

    // An event id is the run, a dash and the sequence.
    private static long SequenceOf(SseItem<string> e) => long.Parse(e.EventId![(e.EventId!.IndexOf('-', StringComparison.Ordinal) + 1)..], CultureInfo.InvariantCulture);

    // A reader reconnecting as a browser does, with the id of the last event it had: its events up to the first `last` holds.
    private static async Task<(string? MediaType, List<SseItem<string>> Events)> ReconnectAsync(HttpClient client, string lastEventId, Func<SseItem<string>, bool> last)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/api/threadpool/stream");
        request.Headers.Add("Last-Event-ID", lastEventId);
        using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).DefaultTimeout();
        var (events, _) = await ReadEventsAsync(response, last);
        return (response.Content.Headers.ContentType?.MediaType, events);
    }

    // This app's run, as its first sample carries it.
    private static async Task<long> RunIdAsync(HttpClient client)
    {
        await ThreadPoolApi.ShowsAsync(client, s => Sequence(s) >= 1);
        using var response = await client.GetAsync(new Uri("/api/threadpool/stream?after=0", UriKind.Relative), HttpCompletionOption.ResponseHeadersRead).DefaultTimeout();
        var (events, _) = await ReadEventsAsync(response, last: _ => true);
        using var data = JsonDocument.Parse(events[0].Data);
        return data.RootElement.GetProperty("runId").GetInt64();
    }

    /// <summary>The stream's events as System.Net.ServerSentEvents parses them, up to the first for which <paramref name="last"/> holds; each read bounded.</summary>
    private static async Task<(List<SseItem<string>> Events, SseParser<string> Parser)> ReadEventsAsync(HttpResponseMessage response, Func<SseItem<string>, bool> last)
    {
        var parser = SseParser.Create(await response.Content.ReadAsStreamAsync().DefaultTimeout());
        var events = new List<SseItem<string>>();
        await using var reader = parser.EnumerateAsync().GetAsyncEnumerator();
        while (await reader.MoveNextAsync().AsTask().DefaultTimeout())
        {
            events.Add(reader.Current);
            if (last(reader.Current))
            {
                break;
            }
        }

        return (events, parser);
    }
}
