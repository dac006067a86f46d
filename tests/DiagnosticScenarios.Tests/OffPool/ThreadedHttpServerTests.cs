using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using DiagnosticScenarios.OffPool;

namespace DiagnosticScenarios.Tests.OffPool;

/// <summary>
/// The answers the server of the app's own threads (the live page's, the slow upstream's) gives by itself are
/// ProblemDetails like every other error of the app: they had been plain text.
/// </summary>
[StartsEarly("a request trickling in until the server drops it: 6–8 s, waiting")]
public sealed class ThreadedHttpServerTests
{
    [Fact]
    public async Task ARequestItCannotRead_IsA400ProblemSayingWhy()
    {
        using var server = Started(maxConnections: 4);

        var answer = await ExchangeAsync(server.Port, "NOT HTTP AT ALL\r\n\r\n");

        AssertProblem(answer, 400, "Bad Request", "Not an HTTP/1.x request line.");
    }

    /// <summary>As Kestrel refuses them: the page's server had served an HTTP/1.1 request with an empty Host (200).</summary>
    [Theory]
    [InlineData("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nHost: localhost\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")]
    public async Task AnHttp11RequestWithoutOneHost_IsA400Problem(string request)
    {
        using var server = Started(maxConnections: 4);

        var answer = await ExchangeAsync(server.Port, request);

        AssertProblem(answer, 400, "Bad Request", "An HTTP/1.1 request must carry one Host header with a value.");
    }

    [Fact]
    public async Task AnHttp10RequestWithoutAHost_IsServed()
    {
        using var server = Started(maxConnections: 4);

        var answer = await ExchangeAsync(server.Port, "GET / HTTP/1.0\r\n\r\n");

        Assert.StartsWith("HTTP/1.1 200 ", answer, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AConnectionBeyondItsLimit_IsA503ProblemWithRetryAfter()
    {
        using var server = Started(maxConnections: 1);
        using var held = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await held.ConnectAsync(IPAddress.Loopback, server.Port).DefaultTimeout();

        // The held connection is admitted by the accepting thread a moment after it connects: until then a second one may be too.
        var (met, answer) = await Poll.UntilAsync(() => ExchangeAsync(server.Port, "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
            a => a.StartsWith("HTTP/1.1 503", StringComparison.Ordinal), TimeSpan.FromSeconds(5));

        Assert.True(met, answer);
        Assert.Contains("Retry-After: 1\r\n", answer, StringComparison.Ordinal);
        AssertProblem(answer, 503, "Service Unavailable", "Too many connections to this server at once; retry.");
    }

    /// <summary>On a thread of its own an unhandled exception would have ended the whole app.</summary>
    [Fact]
    public async Task AHandlerThatThrows_IsA500Problem_TheFailureIsReported_AndTheServerGoesOnServing()
    {
        var failures = new List<string>();
        using var server = new ThreadedHttpServer("test", 4, exchange =>
        {
            if (exchange.Request.Path == "/broken")
            {
                throw new InvalidOperationException("a handler's own bug");
            }

            exchange.Respond(200, "text/plain", "ok");
        }, (request, e) => { lock (failures) { failures.Add($"{request.Path}: {e.Message}"); } });
        server.Start(0);

        var broken = await ExchangeAsync(server.Port, "GET /broken HTTP/1.1\r\nHost: localhost\r\n\r\n");
        var next = await ExchangeAsync(server.Port, "GET /fine HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");

        AssertProblem(broken, 500, "Internal Server Error", "The test server failed to answer GET /broken: InvalidOperationException.");
        Assert.Contains("Connection: close\r\n", broken, StringComparison.Ordinal);
        Assert.Equal(["/broken: a handler's own bug"], failures);
        Assert.StartsWith("HTTP/1.1 200 ", next, StringComparison.Ordinal);
    }

    /// <summary>
    /// A client that sends its head a byte a second, each read well within the idle timeout, had held its connection and
    /// thread for as long as it liked: the server now drops it once the request has taken its time to arrive.
    /// </summary>
    [Fact]
    public async Task ARequestTricklingIn_IsDropped_OnceItHasTakenTheRequestTimeout()
    {
        using var server = Started(maxConnections: 4);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, server.Port).DefaultTimeout();
        var started = System.Diagnostics.Stopwatch.StartNew();
        await socket.SendAsync(Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\nHost: localhost\r\n")).DefaultTimeout();

        // A header byte a second, for up to twice the timeout, until the server closes the connection (a send or a
        // receive then fails, or the receive reads its end).
        var closed = false;
        var buffer = new byte[256];
        while (!closed && started.Elapsed < 2 * ThreadedHttpServer.RequestTimeout)
        {
            await Task.Delay(TimeSpan.FromSeconds(1));
            try
            {
                await socket.SendAsync("X"u8.ToArray()).DefaultTimeout();
                closed = socket.Poll(0, SelectMode.SelectRead) && await socket.ReceiveAsync(buffer).DefaultTimeout() == 0;
            }
            catch (SocketException)
            {
                closed = true;
            }
        }

        Assert.True(closed, $"the connection was still open after {started.Elapsed.TotalSeconds:0} s of a request trickling in");
        Assert.InRange(started.Elapsed, ThreadedHttpServer.RequestTimeout, ThreadedHttpServer.RequestTimeout + TimeSpan.FromSeconds(3));
    }

    private static ThreadedHttpServer Started(int maxConnections)
    {
        var server = new ThreadedHttpServer("test", maxConnections, exchange => exchange.Respond(200, "text/plain", "ok"));
        server.Start(0);
        return server;
    }

    private static void AssertProblem(string answer, int status, string title, string detail)
    {
        var (head, body) = (answer[..answer.IndexOf("\r\n\r\n", StringComparison.Ordinal)], answer[(answer.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4)..]);
        Assert.StartsWith($"HTTP/1.1 {status} ", head, StringComparison.Ordinal);
        Assert.Contains("Content-Type: application/problem+json\r\n", head + "\r\n", StringComparison.Ordinal);
        using var problem = JsonDocument.Parse(body);
        Assert.Equal(status, problem.RootElement.GetProperty("status").GetInt32());
        Assert.Equal(title, problem.RootElement.GetProperty("title").GetString());
        Assert.Equal(detail, problem.RootElement.GetProperty("detail").GetString());
    }

    // Sends the bytes on a new connection and reads until the server closes it.
    private static async Task<string> ExchangeAsync(int port, string request)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, port).DefaultTimeout();
        await socket.SendAsync(Encoding.ASCII.GetBytes(request)).DefaultTimeout();
        var answer = new StringBuilder();
        var buffer = new byte[4096];
        int read;
        while ((read = await socket.ReceiveAsync(buffer).DefaultTimeout()) > 0)
        {
            answer.Append(Encoding.UTF8.GetString(buffer, 0, read));
        }

        return answer.ToString();
    }
}
