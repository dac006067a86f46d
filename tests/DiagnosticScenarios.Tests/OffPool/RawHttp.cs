using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;

namespace DiagnosticScenarios.Tests.OffPool;

/// <summary>HTTP over a raw socket, for what no HTTP client sends: bytes as given, the answer read until the server closes.</summary>
internal static class RawHttp
{
    /// <summary>Sends the bytes on a new connection; the answer and how long the server held the connection until it closed it.</summary>
    public static async Task<(string Answer, TimeSpan Held)> ExchangeAsync(int port, byte[] request)
    {
        using var socket = await ConnectAsync(port);
        var clock = Stopwatch.StartNew();
        await socket.SendAsync(request).DefaultTimeout();
        var answer = await ReadUntilClosedAsync(socket);
        return (answer, clock.Elapsed);
    }

    public static Task<(string Answer, TimeSpan Held)> ExchangeAsync(int port, string request) =>
        ExchangeAsync(port, Encoding.Latin1.GetBytes(request));

    public static async Task<Socket> ConnectAsync(int port)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, port).DefaultTimeout();
        return socket;
    }

    /// <summary>Reads until the server closes the connection (a reset counts as closed).</summary>
    public static async Task<string> ReadUntilClosedAsync(Socket socket)
    {
        var answer = new StringBuilder();
        var buffer = new byte[8192];
        try
        {
            int read;
            while ((read = await socket.ReceiveAsync(buffer).DefaultTimeout()) > 0)
            {
                answer.Append(Encoding.UTF8.GetString(buffer, 0, read));
            }
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.OperationAborted)
        {
            // Closed with a reset, or by the test itself: closed all the same.
        }
        catch (ObjectDisposedException)
        {
            // Closed by the test.
        }

        return answer.ToString();
    }

    /// <summary>The status of an answer's status line, or 0 for no answer.</summary>
    public static int Status(string answer) =>
        answer.StartsWith("HTTP/1.1 ", StringComparison.Ordinal) && int.TryParse(answer.AsSpan(9, 3), out var status) ? status : 0;

    /// <summary>Asserts an answer is a ProblemDetails of <paramref name="status"/> and returns its detail.</summary>
    public static string AssertProblem(string answer, int status)
    {
        var split = answer.IndexOf("\r\n\r\n", StringComparison.Ordinal);
        Assert.True(split > 0, $"no answer head: '{answer}'");
        var (head, body) = (answer[..split] + "\r\n", answer[(split + 4)..]);
        Assert.True(Status(answer) == status, $"expected {status}: {answer}");
        Assert.Contains("Content-Type: application/problem+json\r\n", head, StringComparison.Ordinal);
        using var problem = JsonDocument.Parse(body);
        Assert.Equal(status, problem.RootElement.GetProperty("status").GetInt32());
        Assert.False(string.IsNullOrEmpty(problem.RootElement.GetProperty("title").GetString()), body);
        return problem.RootElement.GetProperty("detail").GetString() ?? "";
    }

    /// <summary>Sends a byte every <paramref name="interval"/> after <paramref name="start"/> until the server closes the connection or <paramref name="giveUp"/> passes.</summary>
    /// <returns>What the server answered and how long it held the connection.</returns>
    public static async Task<(string Answer, TimeSpan Held)> DripAsync(int port, string start, TimeSpan interval, TimeSpan giveUp)
    {
        using var socket = await ConnectAsync(port);
        var clock = Stopwatch.StartNew();
        await socket.SendAsync(Encoding.ASCII.GetBytes(start)).DefaultTimeout();
        var buffer = new byte[8192];
        var answer = new StringBuilder();
        while (clock.Elapsed < giveUp)
        {
            using var wait = new CancellationTokenSource(interval);
            try
            {
                var read = await socket.ReceiveAsync(buffer, wait.Token);
                if (read == 0)
                {
                    return (answer.ToString(), clock.Elapsed);
                }

                answer.Append(Encoding.UTF8.GetString(buffer, 0, read));
                continue;
            }
            catch (OperationCanceledException)
            {
                // Nothing in this interval: the next byte.
            }
            catch (SocketException)
            {
                return (answer.ToString(), clock.Elapsed);
            }

            try
            {
                await socket.SendAsync("X"u8.ToArray()).DefaultTimeout();
            }
            catch (SocketException)
            {
                return (answer.ToString(), clock.Elapsed);
            }
        }

        return (answer.ToString(), clock.Elapsed);
    }

    /// <summary>Waits until the server closes a connection the test sends nothing on; how long that took from now.</summary>
    public static async Task<TimeSpan> HeldSilentAsync(Socket socket, TimeSpan giveUp)
    {
        var clock = Stopwatch.StartNew();
        var buffer = new byte[1024];
        using var limit = new CancellationTokenSource(giveUp);
        try
        {
            while (await socket.ReceiveAsync(buffer, limit.Token) > 0)
            {
            }
        }
        catch (SocketException)
        {
            // Reset: closed.
        }
        catch (OperationCanceledException)
        {
            return Timeout.InfiniteTimeSpan;
        }

        return clock.Elapsed;
    }
}
