using System.Diagnostics;
using System.Net;
using System.Text;
using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.PoolHealth.LivePage;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.OffPool;

/// <summary>The app with the live page's server on deadlines of a second, so the deadlines' tests take seconds, not tens.</summary>
public sealed class ShortDeadlinesApp() : InProcessApp(
[
    ("OffPool:LivePage:FirstByteTimeout", "00:00:01"),
    ("OffPool:LivePage:RequestTimeout", "00:00:01"),
    ("OffPool:LivePage:IdleTimeout", "00:00:02"),
])
{
    public int PagePort => Services.GetRequiredService<LivePageServer>().Port ?? throw new InvalidOperationException("The live page's server is not listening.");
}

/// <summary>
/// The live page's port tried as an attacker on the same machine would, over raw sockets: every malformed request is refused
/// at once with a ProblemDetails of Kestrel's status for it, a slow or silent client is cut at its deadline, and after
/// each the scrape (<c>/metrics</c>) answers at once on a new connection. Kestrel's side of the same is in
/// BadInputSweepTests; the same under a starved pool, with the slots full, in PagePortUnderStarvationTests.
/// </summary>
public sealed class PagePortAbuseTests(ShortDeadlinesApp app, ITestOutputHelper output) : IClassFixture<ShortDeadlinesApp>
{
    // A refusal is written as soon as the offending bytes are in; a second is the margin of a loaded 2-core machine.
    private static readonly TimeSpan AtOnce = TimeSpan.FromSeconds(1);
    private readonly ShortDeadlinesApp _app = (ShortDeadlinesApp)app.LogTo(output);

    public static TheoryData<string, string, int> Malformed => new()
    {
        { "HTTP/1.9, no Host", "GET /metrics HTTP/1.9\r\n\r\n", 505 },
        { "HTTP/1.1x", "GET /metrics HTTP/1.1x\r\nHost: localhost\r\n\r\n", 505 },
        { "HTTP/2.0 over HTTP/1 framing", "GET /metrics HTTP/2.0\r\nHost: localhost\r\n\r\n", 505 },
        { "whitespace before a colon", "GET /metrics HTTP/1.1\r\nHost : localhost\r\n\r\n", 400 },
        { "obsolete line folding", "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-A: 1\r\n folded\r\n\r\n", 400 },
        { "bare LF", "GET /metrics HTTP/1.1\nHost: localhost\n\n", 400 },
        { "bare CR", "GET /metrics HTTP/1.1\rHost: localhost\r\n\r\n", 400 },
        { "NUL in a header", "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-A: a\0b\r\n\r\n", 400 },
        { "control character in a header", "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-A: a\u0001b\r\n\r\n", 400 },
        { "non-ASCII byte in the head", "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-A: caf\u00e9\r\n\r\n", 400 },
        { "no Host on HTTP/1.1", "GET /metrics HTTP/1.1\r\n\r\n", 400 },
        { "two Hosts", "GET /metrics HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n\r\n", 400 },
        { "Host [::1]x", "GET /metrics HTTP/1.1\r\nHost: [::1]x\r\n\r\n", 400 },
        { "Host localhost:1@evil.example", "GET /metrics HTTP/1.1\r\nHost: localhost:1@evil.example\r\n\r\n", 400 },
        // Well-formed requests refused by the page's handler: kept alive as Kestrel keeps them, unless the client closes.
        { "Host not in AllowedHosts", "GET /metrics HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", 400 },
        { "absolute form, foreign authority", "GET http://evil.example/metrics HTTP/1.1\r\nHost: localhost\r\n\r\n", 400 },
        { "absolute form, foreign authority and Host", "GET http://evil.example/metrics HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", 400 },
        { "Content-Length with a sign", "POST /api/threadpool/stacks HTTP/1.1\r\nHost: localhost\r\nContent-Length: +1\r\n\r\nx", 400 },
        { "Content-Length as a list", "POST /api/threadpool/stacks HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1, 1\r\n\r\nx", 400 },
        { "Content-Length twice", "POST /api/threadpool/stacks HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400 },
        { "Transfer-Encoding", "POST /api/threadpool/stacks HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400 },
        { "a TLS ClientHello", "\u0016\u0003\u0001\u0000\u002f\u0001\u0000\u0000\u002b\u0003\u0003", 400 },
    };

    [Theory]
    [MemberData(nameof(Malformed))]
    public async Task AMalformedRequest_IsRefusedAtOnceWithAProblem_AndTheScrapeAnswersAfter(string what, string request, int status)
    {
        var (answer, held) = await RawHttp.ExchangeAsync(_app.PagePort, Encoding.Latin1.GetBytes(request));

        output.WriteLine($"{what}: {answer.Split("\r\n")[0]} in {held.TotalMilliseconds:0} ms");
        RawHttp.AssertProblem(answer, status);
        Assert.True(held < AtOnce, $"{what}: the connection was held {held.TotalMilliseconds:0} ms");
        await AssertScrapeAnswersAsync(what);
    }

    [Fact]
    public async Task ASlowDrip_IsA408AtTheRequestDeadlineFromItsFirstByte_AndTheScrapeAnswersAfter()
    {
        var deadline = Limits.RequestTimeout;

        var (answer, held) = await RawHttp.DripAsync(_app.PagePort, "GET /metrics HTTP/1.1\r\n", TimeSpan.FromMilliseconds(300), 10 * deadline);

        output.WriteLine($"a byte every 300 ms: {answer.Split("\r\n")[0]} after {held.TotalMilliseconds:0} ms (deadline {deadline.TotalMilliseconds:0} ms)");
        RawHttp.AssertProblem(answer, 408);
        Assert.InRange(held, deadline, deadline + AtOnce);
        await AssertScrapeAnswersAsync("a slow drip");
    }

    [Fact]
    public async Task ASilentConnection_IsClosedAtTheFirstByteDeadline_AndAKeptAliveOneAtTheIdleTimeout()
    {
        using var silent = await RawHttp.ConnectAsync(_app.PagePort);
        using var keptAlive = await RawHttp.ConnectAsync(_app.PagePort);
        await keptAlive.SendAsync(Encoding.ASCII.GetBytes("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")).DefaultTimeout();
        var clock = Stopwatch.StartNew();

        var silentHeld = await RawHttp.HeldSilentAsync(silent, 10 * Limits.IdleTimeout);
        var keptAliveHeld = clock.Elapsed + await RawHttp.HeldSilentAsync(keptAlive, 10 * Limits.IdleTimeout);

        output.WriteLine($"silent: closed after {silentHeld.TotalMilliseconds:0} ms; kept alive after an answer: {keptAliveHeld.TotalMilliseconds:0} ms");
        Assert.InRange(silentHeld, Limits.FirstByteTimeout - TimeSpan.FromMilliseconds(100), Limits.FirstByteTimeout + AtOnce);
        Assert.InRange(keptAliveHeld, Limits.IdleTimeout - TimeSpan.FromMilliseconds(100), Limits.IdleTimeout + AtOnce);
        await AssertScrapeAnswersAsync("a silent and an idle connection");
    }

    /// <summary>More silent connections than the server has slots: each new one sheds the oldest idle one, so the scrape gets in.</summary>
    [Fact]
    public async Task MoreSilentConnectionsThanSlots_LeaveTheScrapeAnswering()
    {
        var sockets = new List<System.Net.Sockets.Socket>();
        try
        {
            for (var i = 0; i < Limits.MaxConnections + 20; i++)
            {
                sockets.Add(await RawHttp.ConnectAsync(_app.PagePort));
            }

            await AssertScrapeAnswersAsync($"{sockets.Count} silent connections");
        }
        finally
        {
            sockets.ForEach(s => s.Dispose());
        }
    }

    /// <summary>
    /// More streams than the stream limit: the oldest end, each after a whole event (the page then reconnects with
    /// Last-Event-ID, StreamResumeTests), and the slots kept for short requests serve the scrape.
    /// </summary>
    [Fact]
    public async Task MoreStreamsThanTheStreamLimit_EndTheOldestCleanly_AndLeaveTheScrapeAnswering()
    {
        var streams = new List<(System.Net.Sockets.Socket Socket, Task<string> Read)>();
        try
        {
            for (var i = 0; i < Limits.MaxStreams + 4; i++)
            {
                var socket = await RawHttp.ConnectAsync(_app.PagePort);
                await socket.SendAsync(Encoding.ASCII.GetBytes("GET /api/threadpool/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")).DefaultTimeout();
                streams.Add((socket, RawHttp.ReadUntilClosedAsync(socket)));
            }

            await AssertScrapeAnswersAsync($"{streams.Count} streams");
#pragma warning disable VSTHRD003 // deliberate: the reads were started by this test, which has no SynchronizationContext
            var ended = await Task.WhenAll(streams.Take(4).Select(s => s.Read)).TimeoutAfter(TimeSpan.FromSeconds(10));
#pragma warning restore VSTHRD003

            Assert.All(ended, body =>
            {
                Assert.StartsWith("HTTP/1.1 200 ", body, StringComparison.Ordinal);
                Assert.EndsWith("\n\n", body, StringComparison.Ordinal);
            });
            Assert.All(streams.Skip(4), s => Assert.False(s.Read.IsCompleted, "a newer stream ended instead of an older one"));
        }
        finally
        {
            streams.ForEach(s => s.Socket.Dispose());
        }
    }

    [Fact]
    public async Task BothServers_AnswerWithFramingSniffingAndContentPolicies_ThePageOnesLettingItCallTheApp()
    {
        using var page = new HttpClient { BaseAddress = new Uri($"http://localhost:{_app.PagePort}/") };
        using var kestrel = _app.CreateClient();

        using var pageAnswer = await page.GetAsync(new Uri("/", UriKind.Relative)).DefaultTimeout();
        using var pageRefusal = await page.GetAsync(new Uri("/no-such-file", UriKind.Relative)).DefaultTimeout();
        using var appAnswer = await kestrel.GetAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();
        using var appRefusal = await kestrel.GetAsync(new Uri("/no-such-route", UriKind.Relative)).DefaultTimeout();

        foreach (var (what, response) in new[] { ("the page", pageAnswer), ("the page's 404", pageRefusal), ("the app", appAnswer), ("the app's 404", appRefusal) })
        {
            Assert.True(response.Headers.TryGetValues("X-Frame-Options", out var frame) && frame.Single() == "DENY", $"{what}: X-Frame-Options");
            Assert.True(response.Headers.TryGetValues("X-Content-Type-Options", out var sniff) && sniff.Single() == "nosniff", $"{what}: X-Content-Type-Options");
            var policy = response.Headers.TryGetValues("Content-Security-Policy", out var csp) ? csp.Single() : "";
            Assert.Contains("frame-ancestors 'none'", policy, StringComparison.Ordinal);
            Assert.Contains("script-src 'self'", policy, StringComparison.Ordinal);
        }

        Assert.Equal(HttpStatusCode.OK, pageAnswer.StatusCode);
    }

    /// <summary>Which Host values are well-formed, decided as real Kestrel decides them: the same 400s.</summary>
    [Fact]
    public async Task AHostHeader_IsWellFormed_ExactlyWhenKestrelAcceptsIt()
    {
        string[] hosts =
        [
            "localhost", "LOCALHOST", "localhost:5002", "127.0.0.1", "127.0.0.1:80", "[::1]", "[::1]:5002", "[::1]x", "[::1]:", "[::1", "[::]",
            "localhost:1@evil.example", "user@localhost", "local host", "localhost:", ":5002", "a_b", "a*b", "a+b", "a,b", "a;b", "a=b",
            "a%41", "xn--bcher-kva.example", "localhost:65536", "localhost:-1", "[fe80::1%25eth0]", "a/b", "a?b", "a#b", "a\\b",
        ];
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        await using var kestrel = builder.Build();
        kestrel.MapGet("/", () => "ok");
        await kestrel.StartAsync().DefaultTimeout();
        var port = new Uri(kestrel.Urls.Single()).Port;

        var disagreements = new List<string>();
        foreach (var host in hosts)
        {
            var (answer, _) = await RawHttp.ExchangeAsync(port, $"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
            var kestrelAccepts = RawHttp.Status(answer) == 200;
            if (kestrelAccepts != HttpHost.IsWellFormed(host))
            {
                disagreements.Add($"'{host}': Kestrel {RawHttp.Status(answer)}, ours {(HttpHost.IsWellFormed(host) ? "well-formed" : "refused")}");
            }
        }

        await kestrel.StopAsync().DefaultTimeout();
        Assert.True(disagreements.Count == 0, string.Join("\n", disagreements));
    }

    // The fixture's: the default slots, deadlines of a second or two.
    private OffPoolLimits Limits => _app.Services.GetRequiredService<IOptions<OffPoolOptions>>().Value.LivePage;

    // On a new connection, as Prometheus opens one: 200 within a second.
    private async Task AssertScrapeAnswersAsync(string after)
    {
        var (answer, took) = await RawHttp.ExchangeAsync(_app.PagePort, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        output.WriteLine($"/metrics after {after}: {answer.Split("\r\n")[0]} in {took.TotalMilliseconds:0} ms");
        Assert.True(RawHttp.Status(answer) == 200, $"/metrics after {after}: {answer.Split("\r\n")[0]}");
        Assert.True(took < AtOnce, $"/metrics after {after} took {took.TotalMilliseconds:0} ms");
    }
}
