using System.Globalization;
using System.Text;
using System.Text.Json;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.OffPool;

/// <summary>A request and the one answer it gets: a whole body with its length, or a stream that ends with the connection.</summary>
public sealed class HttpExchange
{
    internal const string ProblemContentType = "application/problem+json";

    private readonly Stream _connection;
    private readonly OffPoolConnection _slot;
    private readonly HttpAnswerHeaders _headers;
    private bool _answered;

    internal HttpExchange(HttpRequestHead request, Stream connection, OffPoolConnection slot, HttpAnswerHeaders headers)
    {
        Request = request;
        _connection = connection;
        _slot = slot;
        _headers = headers;
        KeepAlive = !string.Equals(request.Header("Connection"), "close", StringComparison.OrdinalIgnoreCase)
            && request.Protocol == "HTTP/1.1";
    }

    public HttpRequestHead Request { get; }

    internal bool KeepAlive { get; private set; }

    /// <summary>Set when the server took this exchange's slot for a newer one: a stream ends at its next event.</summary>
    public bool IsShed => _slot.IsShed;

    /// <summary>Whether the client has closed its side of the connection (a handler that waits checks it, to stop waiting for no one).</summary>
    public bool ClientHasGone() => _slot.ClientHasGone();

    /// <summary>Answers with a whole body.</summary>
    public void Respond(int status, string contentType, ReadOnlySpan<byte> body, params (string Name, string Value)[] headers)
    {
        EnsureNotAnswered();
        _connection.Write(_headers.Head(status, contentType, body.Length, KeepAlive, headers));
        if (Request.Method != "HEAD")
        {
            _connection.Write(body);
        }

        _connection.Flush();
    }

    public void Respond(int status, string contentType, string body, params (string Name, string Value)[] headers) =>
        Respond(status, contentType, Encoding.UTF8.GetBytes(body), headers);

    /// <summary>Answers an RFC 9457 ProblemDetails whose instance is this request's path.</summary>
    public void RespondProblem(ProblemDetails problem, params (string Name, string Value)[] headers)
    {
        problem.Instance ??= Request.Path;
        Respond(problem.Status ?? 500, ProblemContentType, ProblemBody(problem), headers);
    }

    public void RespondProblem(int status, string detail, string? title = null, params (string Name, string Value)[] headers) =>
        RespondProblem(Problem(status, detail, title), headers);

    /// <summary>
    /// Starts an answer of unknown length (server-sent events) within the server's stream limit, ending the oldest stream
    /// when it is reached: write to the stream until <see cref="IsShed"/>; the connection closes after it.
    /// </summary>
    /// <returns>The stream, or null when no stream could be made room for (answered 503 then).</returns>
    public Stream? BeginStream(int status, string contentType, params (string Name, string Value)[] headers)
    {
        KeepAlive = false;
        if (!_slot.BeginLong(sheddable: true))
        {
            RespondProblem(503, "Too many streams and long requests on this server at once; retry.", headers: ("Retry-After", "1"));
            return null;
        }

        EnsureNotAnswered();
        _connection.Write(_headers.Head(status, contentType, contentLength: null, keepAlive: false, headers));
        _connection.Flush();
        return _connection;
    }

    /// <summary>Holds this request for a while (a capture), within the server's limit of long exchanges; none may end it.</summary>
    /// <returns>False when the limit is reached (answered 503 then).</returns>
    public bool BeginLong()
    {
        if (_slot.BeginLong(sheddable: false))
        {
            return true;
        }

        RespondProblem(503, "Too many streams and long requests on this server at once; retry.", headers: ("Retry-After", "1"));
        return false;
    }

    // A handler that threw: a 500 ProblemDetails when nothing was written yet; the connection closes either way.
    internal void FailIfNotAnswered(string detail)
    {
        KeepAlive = false;
        if (!_answered)
        {
            RespondProblem(500, detail);
        }
    }

    // A handler that gave no answer: a 500, unless it stopped because the client had gone; the connection closes.
    internal void EndIfNotAnswered()
    {
        if (!_answered)
        {
            KeepAlive = false;
            if (!ClientHasGone())
            {
                RespondProblem(500, "The handler gave no answer.");
            }
        }
    }

    /// <summary>A ProblemDetails titled by the status's reason phrase unless <paramref name="title"/> says otherwise.</summary>
    internal static ProblemDetails Problem(int status, string detail, string? title = null) =>
        new() { Title = title ?? ReasonPhrase(status), Status = status, Detail = detail };

    internal static byte[] ProblemBody(ProblemDetails problem) => JsonSerializer.SerializeToUtf8Bytes(problem, problem.GetType(), JsonSerializerOptions.Web);

    internal static string ReasonPhrase(int status) => Microsoft.AspNetCore.WebUtilities.ReasonPhrases.GetReasonPhrase(status) is { Length: > 0 } phrase ? phrase : "Status";

    private void EnsureNotAnswered()
    {
        if (_answered)
        {
            throw new InvalidOperationException($"{Request.Method} {Request.Path} has been answered already.");
        }

        _answered = true;
    }
}

/// <summary>The head of every answer of one server: status line, content headers, the server's own headers, keep-alive.</summary>
internal sealed class HttpAnswerHeaders(TimeSpan idleTimeout)
{
    private readonly string _keepAlive =
        string.Create(CultureInfo.InvariantCulture, $"Connection: keep-alive\r\nKeep-Alive: timeout={idleTimeout.TotalSeconds:0}\r\n");

    private volatile string _server = Format(Security.SecurityHeaders.Framing);

    /// <summary>The headers the server adds to every answer, its own refusals included.</summary>
    public void Set(IReadOnlyList<(string Name, string Value)> headers) => _server = Format(headers);

    public byte[] Head(int status, string contentType, long? contentLength, bool keepAlive, params (string Name, string Value)[] headers)
    {
        var head = new StringBuilder();
        head.Append("HTTP/1.1 ").Append(status).Append(' ').Append(HttpExchange.ReasonPhrase(status)).Append("\r\n");
        head.Append("Content-Type: ").Append(contentType).Append("\r\n");
        if (contentLength is { } length)
        {
            head.Append("Content-Length: ").Append(length).Append("\r\n");
        }

        head.Append("Cache-Control: no-store\r\n").Append(_server);
        head.Append(keepAlive ? _keepAlive : "Connection: close\r\n");
        foreach (var (name, value) in headers)
        {
            head.Append(name).Append(": ").Append(value).Append("\r\n");
        }

        head.Append("\r\n");
        return Encoding.Latin1.GetBytes(head.ToString());
    }

    private static string Format(IReadOnlyList<(string Name, string Value)> headers) =>
        string.Concat(headers.Select(h => $"{h.Name}: {h.Value}\r\n"));
}
