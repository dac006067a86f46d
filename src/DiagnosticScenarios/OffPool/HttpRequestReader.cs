using System.Buffers;
using System.Globalization;
using System.Net;
using System.Text;

namespace DiagnosticScenarios.OffPool;

/// <summary>
/// Reads HTTP/1.1 requests off one connection as strictly as Kestrel: a request line of exactly three parts, HTTP/1.0 or
/// HTTP/1.1 (any other version is a 505), header names that are tokens with no space before the colon, no folded lines,
/// no bare CR or LF, no control character or non-ASCII byte anywhere in the head, one well-formed Host on HTTP/1.1, a
/// Content-Length of digits given once, no Transfer-Encoding. What breaks a rule is refused as soon as it arrives.
/// </summary>
internal sealed class HttpRequestReader(OffPoolConnection connection)
{
    private const int MaxHeadBytes = 16 * 1024;
    private const int MaxBodyBytes = 1024 * 1024;

    private static readonly SearchValues<char> TokenChars =
        SearchValues.Create("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

    private readonly byte[] _buffer = new byte[MaxHeadBytes];
    private int _start;
    private int _end;

    // How far the bytes in the buffer have been checked for characters a head may not hold.
    private int _checked;

    /// <summary>The next request, or null when the client closed the connection (or let it idle out) between requests.</summary>
    /// <exception cref="BadRequestException">The request breaks a rule: answer its status and close.</exception>
    /// <exception cref="TimeoutException">The request did not arrive whole in time.</exception>
    public HttpRequestHead? ReadRequest()
    {
        // A pipelined request already in the buffer has begun; else the connection waits for one.
        if (_end > _start)
        {
            if (!connection.BeginRequest())
            {
                return null;
            }
        }
        else
        {
            connection.AwaitRequest();
        }

        return ReadHead() is { } head ? Parse(head) : null;
    }

    private HttpRequestHead Parse(string head)
    {
        var lines = head.Split("\r\n");
        var parts = lines[0].Split(' ');
        if (parts.Length != 3 || parts.Any(p => p.Length == 0) || lines[0].Contains('\t', StringComparison.Ordinal))
        {
            throw new BadRequestException(400, "Not an HTTP/1.x request line.");
        }

        var (method, target, protocol) = (parts[0], parts[1], parts[2]);
        if (protocol is not ("HTTP/1.1" or "HTTP/1.0"))
        {
            throw new BadRequestException(505, "Only HTTP/1.0 and HTTP/1.1 are served here.");
        }

        if (method.AsSpan().IndexOfAnyExcept(TokenChars) >= 0)
        {
            throw new BadRequestException(400, "The method is not a token.");
        }

        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        var hosts = new List<string>();
        var lengths = 0;
        foreach (var line in lines.Skip(1))
        {
            if (line.Length > 0 && line[0] is ' ' or '\t')
            {
                throw new BadRequestException(400, "A folded header line (obsolete line folding) is not accepted.");
            }

            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0)
            {
                throw new BadRequestException(400, "A header line without a name.");
            }

            var name = line[..colon];
            if (name.AsSpan().IndexOfAnyExcept(TokenChars) >= 0)
            {
                throw new BadRequestException(400, $"The header name '{name}' is not a token (a space before the colon?).");
            }

            var value = line[(colon + 1)..].Trim(' ', '\t');
            hosts.AddRange(name.Equals("Host", StringComparison.OrdinalIgnoreCase) ? [value] : []);
            lengths += name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase) ? 1 : 0;
            headers[name] = headers.TryGetValue(name, out var earlier) ? $"{earlier}, {value}" : value;
        }

        // As Kestrel does (RFC 9112, section 3.2): an HTTP/1.1 request names one host; HTTP/1.0 may name none.
        if (hosts.Count > 1 || (protocol == "HTTP/1.1" && (hosts.Count == 0 || hosts[0].Length == 0)))
        {
            throw new BadRequestException(400, "An HTTP/1.1 request must carry one Host header with a value.");
        }

        if (hosts.Count == 1 && !HttpHost.IsWellFormed(hosts[0]))
        {
            throw new BadRequestException(400, $"The Host header '{hosts[0]}' is not a well-formed host[:port].");
        }

        var (path, query) = Target(target, hosts.FirstOrDefault());

        if (headers.ContainsKey("Transfer-Encoding"))
        {
            throw new BadRequestException(400, "Chunked request bodies are not accepted here; send a Content-Length.");
        }

        var body = Array.Empty<byte>();
        if (headers.TryGetValue("Content-Length", out var length))
        {
            if (lengths > 1 || length.Length is 0 or > 7 || length.AsSpan().IndexOfAnyExceptInRange('0', '9') >= 0
                || int.Parse(length, CultureInfo.InvariantCulture) is var count && count > MaxBodyBytes)
            {
                throw new BadRequestException(400, $"Content-Length must be given once, as digits, up to {MaxBodyBytes}.");
            }

            body = ReadBody(count);
        }

        return new HttpRequestHead(method, path, query, protocol, headers, body, connection.RemoteAddress);
    }

    // Origin form (/path?query), or absolute form (http://authority/path?query) naming the authority the Host header does, as Kestrel requires.
    private static (string Path, string Query) Target(string target, string? host)
    {
        var pathAndQuery = target;
        if (target[0] != '/')
        {
            if (!target.StartsWith("http://", StringComparison.OrdinalIgnoreCase)
                || target.IndexOf('/', "http://".Length) is var slash && slash < 0
                || !string.Equals(target["http://".Length..slash], host, StringComparison.OrdinalIgnoreCase))
            {
                throw new BadRequestException(400, "The request target must be a path, or an http:// URL whose authority is the Host header's.");
            }

            pathAndQuery = target[slash..];
        }

        var question = pathAndQuery.IndexOf('?', StringComparison.Ordinal);
        return question < 0 ? (pathAndQuery, "") : (pathAndQuery[..question], pathAndQuery[question..]);
    }

    // Null at a clean end of the connection before a new request starts.
    private string? ReadHead()
    {
        while (true)
        {
            var end = _buffer.AsSpan(_start, _end - _start).IndexOf("\r\n\r\n"u8);
            Check(end >= 0 ? _start + end + 4 : _end);
            if (end >= 0)
            {
                var head = Encoding.ASCII.GetString(_buffer, _start, end);
                _start += end + 4;
                return head;
            }

            if (_start > 0)
            {
                Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
                (_end, _checked, _start) = (_end - _start, _checked - _start, 0);
            }

            if (_end == _buffer.Length)
            {
                throw new BadRequestException(431, $"The request head is longer than {MaxHeadBytes} bytes.");
            }

            var read = connection.Receive(_buffer.AsSpan(_end));
            if (read == 0)
            {
                return _end == 0 ? null : throw new IOException("The connection closed in the middle of a request.");
            }

            _end += read;
        }
    }

    // Up to limit (the head's end, once it is in: a body may hold any byte). Refuses a head at its first byte that no valid head holds, without waiting for the rest (a TLS handshake, a bare LF).
    private void Check(int limit)
    {
        if (_checked == _start && _end - _start >= 2 && _buffer[_start] == 0x16 && _buffer[_start + 1] == 0x03)
        {
            throw new BadRequestException(400, "A TLS handshake on a plain-HTTP port: this server speaks http://.");
        }

        for (var i = Math.Max(_checked, _start); i < limit; i++)
        {
            var b = _buffer[i];
            var afterCr = i > _start && _buffer[i - 1] == '\r';
            if (b == '\n' ? !afterCr : afterCr)
            {
                throw new BadRequestException(400, "A bare CR or LF in the request head: lines end with CRLF.");
            }

            if ((b < 0x20 && b is not ((byte)'\r' or (byte)'\n' or (byte)'\t')) || b >= 0x7F)
            {
                throw new BadRequestException(400, string.Create(CultureInfo.InvariantCulture, $"A control character or non-ASCII byte (0x{b:X2}) in the request head."));
            }
        }

        _checked = limit;
    }

    private byte[] ReadBody(int count)
    {
        var body = new byte[count];
        var buffered = Math.Min(count, _end - _start);
        Buffer.BlockCopy(_buffer, _start, body, 0, buffered);
        _start += buffered;
        _checked = Math.Max(_checked, _start);
        for (var filled = buffered; filled < count;)
        {
            var read = connection.Receive(body.AsSpan(filled));
            filled += read > 0 ? read : throw new IOException("The connection closed in the middle of a request body.");
        }

        return body;
    }
}

/// <summary>A request the server refuses before any handler sees it: its status (400, 431, 505) and why.</summary>
internal sealed class BadRequestException(int status, string message) : Exception(message)
{
    public int Status { get; } = status;
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
