using System.Net.Sockets;

namespace DiagnosticScenarios.OffPool;

/// <summary>
/// A small HTTP/1.1 server on threads of its own, never the thread pool (<see cref="OffPoolListener"/>): for what must
/// answer while the app's pool is starved (the live page and its data) and for what must not take threads from that pool
/// (the slow upstream of the blocking scenarios). Kestrel cannot do this: its I/O completions run on the pool.
/// </summary>
/// <remarks>
/// Requests are read by <see cref="HttpRequestReader"/> (Content-Length bodies only) and answered through
/// <see cref="HttpExchange"/>, with a length or, for a stream, without one and closing the connection at its end. Every
/// refusal of its own is a ProblemDetails: 400, 431 or 505 for a request it will not read, 408 for one too slow to
/// arrive, 503 when no slot is free. Loopback only.
/// </remarks>
public sealed class ThreadedHttpServer : IDisposable
{
    private readonly string _name;
    private readonly Action<HttpExchange> _handle;
    private readonly Action<HttpRequestHead, Exception>? _failed;
    private readonly OffPoolListener _listener;
    private readonly HttpAnswerHeaders _headers;
    private volatile bool _stopping;

    /// <param name="name">Names its threads, for stacks and logs.</param>
    /// <param name="limits">Its slots and deadlines.</param>
    /// <param name="handle">Answers one request, on the connection's thread; it may block that thread as long as it likes.</param>
    /// <param name="logger">Where the listener tells of a thread that did not start and of refusals.</param>
    /// <param name="failed">Told of an exception <paramref name="handle"/> threw (to log it); the request gets a 500 ProblemDetails, the server goes on.</param>
    public ThreadedHttpServer(string name, OffPoolLimits limits, Action<HttpExchange> handle, ILogger? logger = null, Action<HttpRequestHead, Exception>? failed = null)
    {
        _name = name;
        _handle = handle;
        _failed = failed;
        _headers = new HttpAnswerHeaders(limits.IdleTimeout);
        _listener = new OffPoolListener(name, limits, Serve, RefuseBusy, logger);
    }

    /// <summary>The port it listens on, once started.</summary>
    public int Port => _listener.Port;

    /// <summary>Connections holding a slot now.</summary>
    public int Connections => _listener.Connections;

    /// <summary>Starts a connection's thread (<see cref="OffPoolListener.StartThread"/>).</summary>
    internal Action<Thread> StartThread
    {
        get => _listener.StartThread;
        set => _listener.StartThread = value;
    }

    /// <summary>Headers for every answer, its own refusals included (<see cref="Security.SecurityHeaders.Framing"/> until set).</summary>
    public void SetResponseHeaders(IReadOnlyList<(string Name, string Value)> headers) => _headers.Set(headers);

    /// <summary>Listens on 127.0.0.1 and, where the machine has it, [::1], at <paramref name="port"/> (0 for a free one).</summary>
    /// <exception cref="SocketException">The port is taken.</exception>
    public void Start(int port) => _listener.Start(port);

    public void Dispose()
    {
        _stopping = true;
        _listener.Dispose();
    }

    private void Serve(OffPoolConnection connection)
    {
        // A reader that stops reading (a stream left open, never read) blocks a write once the socket's buffers are full:
        // after this long the connection is dropped instead of holding its thread.
        connection.Socket.SendTimeout = (int)connection.Limits.IdleTimeout.TotalMilliseconds;
        using var stream = new NetworkStream(connection.Socket, ownsSocket: false);
        var reader = new HttpRequestReader(connection);
        try
        {
            while (!_stopping && reader.ReadRequest() is { } request)
            {
                var exchange = new HttpExchange(request, stream, connection, _headers);
                try
                {
                    _handle(exchange);
                }
                catch (Exception e) when (e is not (IOException or SocketException or ObjectDisposedException))
                {
                    // On a thread of its own an unhandled exception would end the app: the request fails, the server goes on.
                    _failed?.Invoke(request, e);
                    exchange.FailIfNotAnswered($"The {_name} server failed to answer {request.Method} {request.Path}: {e.GetType().Name}.");
                    return;
                }

                exchange.EndIfNotAnswered();
                if (!exchange.KeepAlive)
                {
                    return;
                }
            }
        }
        catch (BadRequestException e)
        {
            Answer(connection.Socket, e.Status, e.Message);
        }
        catch (TimeoutException e)
        {
            Answer(connection.Socket, 408, e.Message);
        }
    }

    private void RefuseBusy(Socket connection)
    {
        var problem = HttpExchange.ProblemBody(HttpExchange.Problem(503, "Too many connections to this server at once; retry."));
        TryWrite(connection, _headers.Head(503, HttpExchange.ProblemContentType, problem.Length, keepAlive: false, ("Retry-After", "1")), problem);
        // On the accepting thread: briefly, since it accepts nothing meanwhile.
        CloseAfterAnswer(connection, TimeSpan.FromMilliseconds(100));
    }

    // A request refused before any handler: its ProblemDetails, then the connection closes.
    private void Answer(Socket connection, int status, string detail)
    {
        var problem = HttpExchange.ProblemBody(HttpExchange.Problem(status, detail));
        TryWrite(connection, _headers.Head(status, HttpExchange.ProblemContentType, problem.Length, keepAlive: false), problem);
        CloseAfterAnswer(connection, TimeSpan.FromSeconds(1));
    }

    /// <summary>
    /// Closes a connection whose request was not read: a socket closed with unread bytes resets the connection, and the
    /// client may then lose the answer written just before. Ends the sending side, discards what the client still sends
    /// for up to <paramref name="patience"/>; the listener closes it then.
    /// </summary>
    private static void CloseAfterAnswer(Socket connection, TimeSpan patience)
    {
        try
        {
            connection.Shutdown(SocketShutdown.Send);
            var buffer = new byte[4096];
            var waited = System.Diagnostics.Stopwatch.StartNew();
            while (waited.Elapsed < patience
                && connection.Poll((int)Math.Max(1, (patience - waited.Elapsed).TotalMicroseconds), SelectMode.SelectRead)
                && connection.Receive(buffer) > 0)
            {
            }
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Gone already.
        }
    }

    private static void TryWrite(Socket connection, byte[] head, byte[] body)
    {
        try
        {
            connection.Send(head);
            connection.Send(body);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Gone already.
        }
    }
}
