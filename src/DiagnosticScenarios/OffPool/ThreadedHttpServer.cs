using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace DiagnosticScenarios.OffPool;

/// <summary>
/// A small HTTP/1.1 server on threads of its own, never the thread pool: an accept thread per address and a thread per
/// connection, bounded in connections, request size and idle time. For what must answer while the app's pool is starved
/// (the live page and its data) and for what must not take threads from that pool (the slow upstream of the blocking
/// scenarios), as the embedded TDS responder does for SQL. Kestrel cannot do this: its I/O completions run on the pool.
/// </summary>
/// <remarks>
/// It reads a request line, headers and an optional Content-Length body (no chunked uploads), and answers with a length
/// or, for a stream, without one and closing the connection at its end. Loopback only.
/// </remarks>
public sealed class ThreadedHttpServer : IDisposable
{
    private const int MaxHeadBytes = 16 * 1024;
    private const int MaxBodyBytes = 1024 * 1024;
    private const int ConnectionThreadStack = 256 * 1024;

    /// <summary>
    /// How long a kept-alive connection may sit idle before the server closes it; every keep-alive answer says so
    /// (<c>Keep-Alive: timeout=10</c>), so a client that honours it (.NET's HttpClient retires the connection a second
    /// early) never sends a request on a connection the server is closing, which it would see reset.
    /// </summary>
    public static readonly TimeSpan IdleTimeout = TimeSpan.FromSeconds(10);

    /// <summary>
    /// How long a request may take to arrive once its first byte has, head and body: a client that sends a byte now and
    /// then (each read within <see cref="IdleTimeout"/>) would otherwise hold a connection, and its thread, for good.
    /// Requests from a browser or a tool arrive whole in a moment.
    /// </summary>
    public static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(5);

    private readonly string _name;
    private readonly int _maxConnections;
    private readonly Action<HttpExchange> _handle;
    private readonly Action<HttpRequestHead, Exception>? _failed;
    private readonly List<Socket> _listeners = [];
    private readonly HashSet<Socket> _connections = [];
    private readonly Lock _lock = new();
    private volatile bool _stopping;

    /// <param name="name">Names its threads, for stacks and logs.</param>
    /// <param name="maxConnections">Connections served at once; one more is answered 503 and closed.</param>
    /// <param name="handle">Answers one request, on the connection's thread; it may block that thread as long as it likes.</param>
    /// <param name="failed">Told of an exception <paramref name="handle"/> threw (to log it); the request gets a 500 ProblemDetails, the server goes on.</param>
    public ThreadedHttpServer(string name, int maxConnections, Action<HttpExchange> handle, Action<HttpRequestHead, Exception>? failed = null)
    {
        _name = name;
        _maxConnections = maxConnections;
        _handle = handle;
        _failed = failed;
    }

    /// <summary>The port it listens on, once started.</summary>
    public int Port { get; private set; }

    /// <summary>Listens on 127.0.0.1 and, where the machine has it, [::1], at <paramref name="port"/> (0 for a free one).</summary>
    /// <exception cref="SocketException">The port is taken.</exception>
    public void Start(int port)
    {
        var first = Listen(IPAddress.Loopback, port);
        Port = ((IPEndPoint)first.LocalEndPoint!).Port;
        if (Socket.OSSupportsIPv6)
        {
            try
            {
                Listen(IPAddress.IPv6Loopback, Port);
            }
            catch (SocketException)
            {
                // No IPv6 loopback here (a container without it): 127.0.0.1 serves localhost alone.
            }
        }
    }

    public void Dispose()
    {
        _stopping = true;
        lock (_lock)
        {
            foreach (var socket in _listeners.Concat(_connections))
            {
                socket.Dispose();
            }

            _listeners.Clear();
            _connections.Clear();
        }
    }

    private Socket Listen(IPAddress address, int port)
    {
        var listener = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            listener.Bind(new IPEndPoint(address, port));
            listener.Listen(128);
        }
        catch
        {
            listener.Dispose();
            throw;
        }

        lock (_lock)
        {
            _listeners.Add(listener);
        }

        new Thread(() => Accept(listener)) { IsBackground = true, Name = $"{_name} accept" }.Start();
        return listener;
    }

    private void Accept(Socket listener)
    {
        while (!_stopping)
        {
            Socket connection;
            try
            {
                connection = listener.Accept();
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                return;
            }

            bool admitted;
            lock (_lock)
            {
                admitted = !_stopping && _connections.Count < _maxConnections;
                if (admitted)
                {
                    _connections.Add(connection);
                }
            }

            if (!admitted)
            {
                RefuseBusy(connection);
                continue;
            }

            new Thread(() => Serve(connection), ConnectionThreadStack) { IsBackground = true, Name = $"{_name} connection" }.Start();
        }
    }

    private void Serve(Socket connection)
    {
        try
        {
            connection.NoDelay = true;
            connection.ReceiveTimeout = (int)IdleTimeout.TotalMilliseconds;
            // A reader that stops reading (a stream left open, never read) blocks a write once the socket's buffers are
            // full: after this long the connection is dropped instead of holding its thread.
            connection.SendTimeout = (int)IdleTimeout.TotalMilliseconds;
            using var stream = new NetworkStream(connection, ownsSocket: false);
            var reader = new RequestReader(stream);
            while (!_stopping && reader.ReadRequest(connection.RemoteEndPoint) is { } request)
            {
                var exchange = new HttpExchange(request, stream);
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
            var problem = HttpExchange.Problem(400, e.Message);
            TryWrite(connection, HttpExchange.Head(400, HttpExchange.ProblemContentType, problem.Length, keepAlive: false), problem);
            CloseAfterAnswer(connection, TimeSpan.FromSeconds(1));
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
        {
            // The client went away, sent nothing for the idle timeout, or the server is stopping.
        }
        finally
        {
            lock (_lock)
            {
                _connections.Remove(connection);
            }

            connection.Dispose();
        }
    }

    private static void RefuseBusy(Socket connection)
    {
        var problem = HttpExchange.Problem(503, "Too many connections to this server at once; retry.");
        TryWrite(connection, HttpExchange.Head(503, HttpExchange.ProblemContentType, problem.Length, keepAlive: false, ("Retry-After", "1")), problem);
        // On the accepting thread: briefly, since it accepts nothing meanwhile.
        CloseAfterAnswer(connection, TimeSpan.FromMilliseconds(100));
    }

    /// <summary>
    /// Closes a connection whose request was not read: a socket closed with unread bytes resets the connection, and the
    /// client may then lose the answer written just before. Ends the sending side, discards what the client still sends
    /// for up to <paramref name="patience"/>, then closes.
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
        finally
        {
            connection.Dispose();
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

    /// <summary>Reads requests off one connection: the head byte by byte up to its blank line, then a Content-Length body.</summary>
    private sealed class RequestReader(Stream stream)
    {
        private readonly byte[] _buffer = new byte[MaxHeadBytes];
        private int _start;
        private int _end;

        // Started when a request's first byte is in: the whole request must be in within RequestTimeout.
        private long _requestStarted;

        public HttpRequestHead? ReadRequest(EndPoint? remote)
        {
            var head = ReadHead();
            if (head is null)
            {
                return null;
            }

            var lines = head.Split("\r\n");
            var parts = lines[0].Split(' ');
            if (parts.Length != 3 || !parts[2].StartsWith("HTTP/1.", StringComparison.Ordinal) || parts[1].Length == 0 || parts[1][0] != '/')
            {
                throw new BadRequestException("Not an HTTP/1.x request line.");
            }

            var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            foreach (var line in lines.Skip(1))
            {
                var colon = line.IndexOf(':', StringComparison.Ordinal);
                if (colon <= 0)
                {
                    throw new BadRequestException("A header line without a name.");
                }

                var name = line[..colon].Trim();
                var value = line[(colon + 1)..].Trim();
                headers[name] = headers.TryGetValue(name, out var earlier) ? $"{earlier}, {value}" : value;
            }

            // As Kestrel does (RFC 9112, section 3.2): an HTTP/1.1 request names one host; HTTP/1.0 may name none.
            if (parts[2] == "HTTP/1.1" && (!headers.TryGetValue("Host", out var host) || host.Length == 0 || host.Contains(',', StringComparison.Ordinal)))
            {
                throw new BadRequestException("An HTTP/1.1 request must carry one Host header with a value.");
            }

            if (headers.ContainsKey("Transfer-Encoding"))
            {
                throw new BadRequestException("Chunked request bodies are not accepted here; send a Content-Length.");
            }

            var body = Array.Empty<byte>();
            if (headers.TryGetValue("Content-Length", out var length))
            {
                if (!int.TryParse(length, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var count) || count > MaxBodyBytes)
                {
                    throw new BadRequestException($"Content-Length must be a whole number up to {MaxBodyBytes}.");
                }

                body = ReadBody(count);
            }

            var target = parts[1];
            var question = target.IndexOf('?', StringComparison.Ordinal);
            return new HttpRequestHead(
                parts[0],
                question < 0 ? target : target[..question],
                question < 0 ? "" : target[question..],
                parts[2],
                headers,
                body,
                (remote as IPEndPoint)?.Address);
        }

        // Null at a clean end of the connection before a new request starts.
        private string? ReadHead()
        {
            _requestStarted = _end > _start ? Stopwatch.GetTimestamp() : 0;
            while (true)
            {
                var end = _buffer.AsSpan(_start, _end - _start).IndexOf("\r\n\r\n"u8);
                if (end >= 0)
                {
                    var head = Encoding.Latin1.GetString(_buffer, _start, end);
                    _start += end + 4;
                    return head;
                }

                if (_start > 0)
                {
                    Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
                    _end -= _start;
                    _start = 0;
                }

                if (_end == _buffer.Length)
                {
                    throw new BadRequestException($"The request head is longer than {MaxHeadBytes} bytes.");
                }

                var read = stream.Read(_buffer, _end, _buffer.Length - _end);
                if (read == 0)
                {
                    return _end == 0 ? null : throw new IOException("The connection closed in the middle of a request.");
                }

                _end += read;
                _requestStarted = _requestStarted == 0 ? Stopwatch.GetTimestamp() : _requestStarted;
                ThrowIfLate();
            }
        }

        // Closes the connection without an answer, as for a client gone quiet: one this slow is not reading one either.
        private void ThrowIfLate()
        {
            if (_requestStarted != 0 && Stopwatch.GetElapsedTime(_requestStarted) > RequestTimeout)
            {
                throw new IOException($"The request did not arrive whole within {RequestTimeout.TotalSeconds:0} s.");
            }
        }

        private byte[] ReadBody(int count)
        {
            var body = new byte[count];
            var buffered = Math.Min(count, _end - _start);
            Buffer.BlockCopy(_buffer, _start, body, 0, buffered);
            _start += buffered;
            for (var filled = buffered; filled < count;)
            {
                var read = stream.Read(body, filled, count - filled);
                filled += read > 0 ? read : throw new IOException("The connection closed in the middle of a request body.");
                ThrowIfLate();
            }

            return body;
        }
    }

    private sealed class BadRequestException(string message) : Exception(message);
}

/// <summary>One request as <see cref="ThreadedHttpServer"/> read it.</summary>
/// <param name="Method">GET, POST, ...</param>
/// <param name="Path">The path, still percent-encoded.</param>
/// <param name="Query">The query string with its leading <c>?</c>, or empty.</param>
/// <param name="Protocol">HTTP/1.1 or HTTP/1.0.</param>
/// <param name="Headers">By name, case-insensitive; a repeated header's values joined with commas.</param>
/// <param name="Body">The Content-Length body, or empty.</param>
/// <param name="RemoteAddress">The client's address.</param>
public sealed record HttpRequestHead(
    string Method,
    string Path,
    string Query,
    string Protocol,
    IReadOnlyDictionary<string, string> Headers,
    byte[] Body,
    IPAddress? RemoteAddress)
{
    public string? Header(string name) => Headers.TryGetValue(name, out var value) ? value : null;
}

/// <summary>A request and the one answer it gets: a whole body with its length, or a stream that ends with the connection.</summary>
public sealed class HttpExchange
{
    // Written into every kept-alive answer: formatted once.
    private static readonly string KeepAliveHead =
        string.Create(CultureInfo.InvariantCulture, $"Connection: keep-alive\r\nKeep-Alive: timeout={ThreadedHttpServer.IdleTimeout.TotalSeconds:0}\r\n");

    private readonly Stream _connection;
    private bool _answered;

    internal HttpExchange(HttpRequestHead request, Stream connection)
    {
        Request = request;
        _connection = connection;
        KeepAlive = !string.Equals(request.Header("Connection"), "close", StringComparison.OrdinalIgnoreCase)
            && request.Protocol == "HTTP/1.1";
    }

    public HttpRequestHead Request { get; }

    internal bool KeepAlive { get; private set; }

    /// <summary>Answers with a whole body.</summary>
    public void Respond(int status, string contentType, ReadOnlySpan<byte> body, params (string Name, string Value)[] headers)
    {
        EnsureNotAnswered();
        _connection.Write(Head(status, contentType, body.Length, KeepAlive, headers));
        if (Request.Method != "HEAD")
        {
            _connection.Write(body);
        }

        _connection.Flush();
    }

    public void Respond(int status, string contentType, string body, params (string Name, string Value)[] headers) =>
        Respond(status, contentType, Encoding.UTF8.GetBytes(body), headers);

    /// <summary>Starts an answer of unknown length (server-sent events): write to the stream; the connection closes after it.</summary>
    public Stream BeginStream(int status, string contentType, params (string Name, string Value)[] headers)
    {
        EnsureNotAnswered();
        KeepAlive = false;
        _connection.Write(Head(status, contentType, contentLength: null, keepAlive: false, headers));
        _connection.Flush();
        return _connection;
    }

    // A handler that threw: a 500 ProblemDetails when nothing was written yet; the connection closes either way.
    internal void FailIfNotAnswered(string detail)
    {
        if (!_answered)
        {
            KeepAlive = false;
            Respond(500, ProblemContentType, Problem(500, detail));
        }
    }

    internal void EndIfNotAnswered()
    {
        if (!_answered)
        {
            Respond(500, ProblemContentType, Problem(500, "The handler gave no answer."));
        }
    }

    internal const string ProblemContentType = "application/problem+json";

    /// <summary>An RFC 9457 ProblemDetails for an answer the server gives itself (a request it cannot read, too many connections).</summary>
    internal static byte[] Problem(int status, string detail) =>
        System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(new Microsoft.AspNetCore.Mvc.ProblemDetails { Title = ReasonPhrase(status), Status = status, Detail = detail });

    internal static byte[] Head(int status, string contentType, long? contentLength, bool keepAlive, params (string Name, string Value)[] headers)
    {
        var head = new StringBuilder();
        head.Append("HTTP/1.1 ").Append(status).Append(' ').Append(ReasonPhrase(status)).Append("\r\n");
        head.Append("Content-Type: ").Append(contentType).Append("\r\n");
        if (contentLength is { } length)
        {
            head.Append("Content-Length: ").Append(length).Append("\r\n");
        }

        head.Append("Cache-Control: no-store\r\n");
        head.Append("X-Content-Type-Options: nosniff\r\n");
        head.Append(keepAlive ? KeepAliveHead : "Connection: close\r\n");
        foreach (var (name, value) in headers)
        {
            head.Append(name).Append(": ").Append(value).Append("\r\n");
        }

        head.Append("\r\n");
        return Encoding.Latin1.GetBytes(head.ToString());
    }

    private static string ReasonPhrase(int status) => Microsoft.AspNetCore.WebUtilities.ReasonPhrases.GetReasonPhrase(status) is { Length: > 0 } phrase ? phrase : "Status";

    private void EnsureNotAnswered()
    {
        if (_answered)
        {
            throw new InvalidOperationException($"{Request.Method} {Request.Path} has been answered already.");
        }

        _answered = true;
    }
}
