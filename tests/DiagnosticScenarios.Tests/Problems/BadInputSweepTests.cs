using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.Scenarios.Blocking;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Experiments;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Problems;

/// <summary>A real Kestrel server of its own, in Production, shared by the sweep and the protocol abuse.</summary>
public sealed class SweptServer : IAsyncLifetime
{
    public ServerProcess Server { get; private set; } = null!;

    public async Task InitializeAsync() => Server = await LoadExperiment.StartServerAsync();

    public async Task DisposeAsync() => await Server.DisposeAsync();
}

/// <summary>
/// Every route and every parameter the OpenAPI document lists, sent malformed values: each answers a 4xx ProblemDetails within a
/// second, never a 5xx. A new route is swept as soon as it is mapped. No value here is valid, so no scenario ever runs.
/// Then protocol abuse a real Kestrel server must shrug off, with ping answering at once after each; and, on the same
/// server, the bodyread pair reading a slow upload, which only a real Kestrel shows.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
public sealed class BadInputSweepTests(SweptServer fixture, ITestOutputHelper output) : IClassFixture<SweptServer>
{
    private static readonly TimeSpan Answer = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan NoAnswer = TimeSpan.FromSeconds(3);

    // Not one of them is a valid value for any parameter: the sweep never runs a scenario or changes the process.
    private static readonly (string Kind, string Encoded)[] Malformed =
    [
        ("non-numeric", "abc"),
        ("decimal", "1.5"),
        ("hexadecimal", "0x10"),
        ("signed", "%2B5"),
        ("negative", "-1"),
        ("overflow", "99999999999999999999"),
        ("huge", new string('9', 4000)),
        ("NUL", "%00"),
        ("digit then NUL", "1%00"),
        ("Arabic-Indic digits", Uri.EscapeDataString("١٢")),
        ("full-width digit", Uri.EscapeDataString("１")),
        ("emoji", Uri.EscapeDataString("😀")),
        ("empty", ""),
    ];

    private HttpClient Client { get; } = new HttpClient { BaseAddress = fixture.Server.BaseAddress, Timeout = TimeSpan.FromSeconds(10) };

    [Fact]
    public async Task EveryParameterOfEveryRoute_Answers4xxProblemDetailsWithinASecond_ForMalformedValues()
    {
        using var document = JsonDocument.Parse(await Client.GetStringAsync(new Uri("/openapi/v1.json", UriKind.Relative)).DefaultTimeout());
        var requests = SweepRequests(document.RootElement).ToList();

        var byStatus = new SortedDictionary<int, int>();
        var failures = new List<string>();
        var refusedBeforeTheApp = 0;
        foreach (var (method, _, url, what) in requests)
        {
            using var request = new HttpRequestMessage(new HttpMethod(method), new Uri(url, UriKind.Relative));
            request.Headers.Add(ControlGate.HeaderName, "1");
            var (answered, reply, took) = await TimeoutExtensions.AnswerWithinAsync(NoAnswer, async giveUp =>
            {
                var response = await Client.SendAsync(request, giveUp);
                return (Response: response, Body: await response.Content.ReadAsStringAsync(giveUp));
            });
            if (!answered)
            {
                failures.Add($"{method} {Shorten(url)} ({what}): no answer within {NoAnswer.TotalSeconds:0} s");
                continue;
            }

            var (response, body) = reply;
            using var disposed = response;
            var status = (int)response.StatusCode;
            byStatus[status] = byStatus.GetValueOrDefault(status) + 1;
            // Kestrel refuses a request line it cannot read (a NUL in the path) before the app sees it: a 400 with no body.
            var refusedByKestrel = status == 400 && body.Length == 0;
            refusedBeforeTheApp += refusedByKestrel ? 1 : 0;
            var problem = response.Content.Headers.ContentType?.MediaType == "application/problem+json";
            if (status is < 400 or >= 500 || !(problem || refusedByKestrel) || took > Answer)
            {
                failures.Add($"{method} {Shorten(url)} ({what}): {status} {response.Content.Headers.ContentType?.MediaType} in {took.TotalMilliseconds:0} ms {Shorten(body)}");
            }
        }

        var routes = requests.Select(r => r.Method + " " + r.Route).Distinct().Count();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Swept {requests.Count} malformed inputs over {routes} route(s) from /openapi/v1.json; answers by status: {string.Join(", ", byStatus.Select(s => $"{s.Key} × {s.Value}"))}; " +
            $"5xx: {byStatus.Where(s => s.Key >= 500).Sum(s => s.Value)}; refused by Kestrel before the app (400, no body): {refusedBeforeTheApp}"));
        Assert.True(requests.Count >= 100, $"Only {requests.Count} inputs: did the OpenAPI document lose its parameters?");
        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    [Fact]
    public async Task HundredKilobyteQueryString_IsRefused_AndPingAnswersAtOnce()
    {
        using var response = await Client.GetAsync(new Uri("/api/diagscenario/ping?x=" + new string('a', 100 * 1024), UriKind.Relative)).DefaultTimeout();

        Assert.InRange((int)response.StatusCode, 400, 499);
        await AssertPingAnswersAtOnceAsync($"a 100 KB query string ({(int)response.StatusCode})");
    }

    [Fact]
    public async Task SixtyFourKilobyteHeader_IsRefused_AndPingAnswersAtOnce()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri("/api/diagscenario/ping", UriKind.Relative));
        request.Headers.Add("X-Padding", new string('a', 64 * 1024));

        using var response = await Client.SendAsync(request).DefaultTimeout();

        Assert.InRange((int)response.StatusCode, 400, 499);
        await AssertPingAnswersAtOnceAsync($"a 64 KB header ({(int)response.StatusCode})");
    }

    [Theory]
    [InlineData("bodyread", "application/octet-stream")]
    [InlineData("bodyread", "application/x-www-form-urlencoded")]
    [InlineData("bodyread-async", "application/octet-stream")]
    [InlineData("bodyread-async", "application/x-www-form-urlencoded")]
    public async Task BodyOverTheRoutesLimit_Answers413ProblemNamingTheLimit_UnloggedAsAFailure_AndPingAnswersAtOnce(string route, string contentType)
    {
        // The pair's own limit, far under Kestrel's 30 MB (which would let each request hold 30 MB in memory). A form-encoded
        // body (curl -d sends one) must not be read by model binding before bodyread-async runs, nor refused as a 400 naming no
        // parameter; and no body over the limit may be a logged 500.
        var limit = BlockingDefaults.BodyReadMaxBytes;
        using var content = new ByteArrayContent(new byte[limit + 1]);
        content.Headers.ContentType = new MediaTypeHeaderValue(contentType);

        // Asking first, as curl does for a large body: a client that sends it all meets the connection Kestrel closes after its answer.
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri($"/api/blocking/{route}", UriKind.Relative)) { Content = content };
        request.Headers.ExpectContinue = true;

        using var response = await Client.SendAsync(request).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.RequestEntityTooLarge);
        Assert.Contains(limit.ToString(CultureInfo.InvariantCulture), problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.DoesNotContain("Request body too large", fixture.Server.Output, StringComparison.Ordinal);
        await AssertPingAnswersAtOnceAsync($"a body of {limit + 1} bytes to {route} ({contentType})");
    }

    [Theory]
    [InlineData("junk bytes")]
    [InlineData("a TLS ClientHello")]
    public async Task RawBytesThatAreNotHttp_CloseThatConnection_AndPingAnswersAtOnce(string what)
    {
        byte[] bytes = what == "junk bytes"
            ? [0x00, 0xFF, 0x13, 0x37, .. Encoding.ASCII.GetBytes("\u0001garbage \r\n\r\n"), .. new byte[4096]]
            : TlsClientHello();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveTimeout = 5000 };
        await socket.ConnectAsync(IPAddress.Loopback, fixture.Server.BaseAddress.Port).DefaultTimeout();

        await socket.SendAsync(bytes).DefaultTimeout();
        var answer = await ReadUntilClosedAsync(socket);

        output.WriteLine($"{what}: the server answered {answer.Length} bytes ({Shorten(Encoding.ASCII.GetString(answer).Split('\r')[0])}) and closed the connection");
        await AssertPingAnswersAtOnceAsync(what);
    }

    /// <summary>(method, route, URL, which parameter got which kind of value) for every parameter of every operation in the document.</summary>
    private static IEnumerable<(string Method, string Route, string Url, string What)> SweepRequests(JsonElement document)
    {
        foreach (var path in document.GetProperty("paths").EnumerateObject())
        {
            foreach (var operation in path.Value.EnumerateObject().Where(o => o.Name is "get" or "put" or "post" or "delete" or "patch"))
            {
                var parameters = operation.Value.TryGetProperty("parameters", out var list)
                    ? list.EnumerateArray().Select(p => (Name: p.GetProperty("name").GetString()!, In: p.GetProperty("in").GetString()!)).ToList()
                    : [];
                var method = operation.Name.ToUpperInvariant();
                foreach (var parameter in parameters.Where(p => p.In is "path" or "query"))
                {
                    foreach (var (kind, value) in Malformed)
                    {
                        yield return (method, path.Name, Url(path.Name, parameters, parameter.Name, parameter.In == "query" ? $"{parameter.Name}={value}" : value), $"{parameter.Name}: {kind}");
                    }

                    if (parameter.In == "query")
                    {
                        yield return (method, path.Name, Url(path.Name, parameters, parameter.Name, $"{parameter.Name}=1&{parameter.Name}=1"), $"{parameter.Name}: repeated");
                    }
                }
            }
        }
    }

    // The swept parameter gets the value; every other path parameter gets a malformed one too, so nothing can run.
    private static string Url(string template, List<(string Name, string In)> parameters, string swept, string value)
    {
        var url = template;
        foreach (var (name, location) in parameters.Where(p => p.In == "path"))
        {
            url = url.Replace("{" + name + "}", name == swept ? value : "abc", StringComparison.Ordinal);
        }

        var sweptIn = parameters.First(p => p.Name == swept).In;
        return sweptIn == "query" ? $"{url}?{value}" : url;
    }

    private async Task AssertPingAnswersAtOnceAsync(string after)
    {
        var clock = Stopwatch.StartNew();
        var ping = await Client.GetStringAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();
        clock.Stop();

        output.WriteLine($"ping after {after}: {clock.ElapsedMilliseconds} ms");
        Assert.False(fixture.Server.HasExited, $"The server exited after {after}.\n{fixture.Server.Output}");
        Assert.Equal("success:ping", ping);
        Assert.True(clock.Elapsed < Answer, $"ping took {clock.ElapsedMilliseconds} ms after {after}");
    }

    private static async Task<byte[]> ReadUntilClosedAsync(Socket socket)
    {
        using var answer = new MemoryStream();
        var buffer = new byte[4096];
        try
        {
            int read;
            while ((read = await socket.ReceiveAsync(buffer).DefaultTimeout()) > 0)
            {
                await answer.WriteAsync(buffer.AsMemory(0, read));
            }
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
        {
            // Closed with a reset: closed all the same.
        }

        return answer.ToArray();
    }

    // A TLS 1.2 ClientHello record as a browser sends it first on an https:// URL: handshake type 1, no extensions.
    private static byte[] TlsClientHello()
    {
        byte[] body = [0x03, 0x03, .. new byte[32], 0x00, 0x00, 0x02, 0x00, 0x2F, 0x01, 0x00];
        byte[] handshake = [0x01, 0x00, (byte)(body.Length >> 8), (byte)body.Length, .. body];
        return [0x16, 0x03, 0x01, (byte)(handshake.Length >> 8), (byte)handshake.Length, .. handshake];
    }

    private static string Shorten(string text) => text.Length <= 160 ? text : string.Concat(text.AsSpan(0, 160), "…");

    // The attribution records a request once the app has answered it, a moment after the client may have the answer.
    private static readonly TimeSpan ServerPatience = TimeSpan.FromSeconds(5);

    public static TheoryData<string> Uploaded => [.. ScenarioCatalogue.InFamily(ScenarioCatalogue.Blocking).Where(s => s.Load is not null).Select(s => s.Name)];

    // The bodyread pair on this real Kestrel server, a body uploaded in pieces as its load sends it: both twins read it to
    // its last piece before they answer. The client cannot tell (HttpClient sends its body to the end before it returns,
    // whatever the server does; the in-memory server has it all before the action runs), so the server's own time for each
    // request, its attribution's, tells: it lasted the upload.
    [Theory]
    [MemberData(nameof(Uploaded))]
    public async Task BodyRead_ReadsASlowUploadToItsLastPiece_BeforeItAnswers(string name)
    {
        var scenario = CatalogueData.Find(ScenarioCatalogue.Blocking, name);
        var load = scenario.Load!;
        var upload = TimeSpan.FromMilliseconds(load.UploadMs);
        using var client = fixture.Server.CreateClient();

        using var request = new HttpRequestMessage(new HttpMethod(load.Method), new Uri(scenario.Route, UriKind.Relative))
        {
            Content = new SlowUploadContent(load.BodyBytes, upload),
        };
        using var response = await client.SendAsync(request).DefaultTimeout();
        Assert.Equal((HttpStatusCode.OK, $"success:blocking-{name}"), (response.StatusCode, await response.Content.ReadAsStringAsync().DefaultTimeout()));

        // The server's clock starts when the headers arrive, with the first piece: from then on it waits for the rest. Seen:
        // 190 and 213 ms for a 200 ms upload; about 10 ms for a twin that answered without reading.
        var waited = upload - SlowUploadContent.PieceInterval;
        var (read, figures) = await ThreadPoolApi.PollAsync(client, s => ServerMs(s, scenario) >= waited.TotalMilliseconds, ServerPatience, TimeSpan.FromMilliseconds(100));
        output.WriteLine($"{scenario.Route}: the server's longest request {ServerMs(figures, scenario)} ms, the upload {upload.TotalMilliseconds} ms");
        Assert.True(read, $"{scenario.Route}: the server's longest request took {ServerMs(figures, scenario)} ms, less than the {upload.TotalMilliseconds} ms upload after its first piece: it answered before reading the body.");
    }

    private static double? ServerMs(JsonElement threadPool, Scenario scenario) =>
        ThreadPoolApi.Endpoint(threadPool, scenario.Route)?.GetProperty("latency").GetProperty("maxMs").GetDouble();
}
