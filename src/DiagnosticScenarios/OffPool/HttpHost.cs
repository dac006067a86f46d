namespace DiagnosticScenarios.OffPool;

/// <summary>
/// Whether a Host header is a well-formed <c>host[:port]</c>, by Kestrel's rule (its <c>HttpUtilities.IsHostHeaderValid</c>):
/// a reg-name or IPv4 of the characters Http.Sys allows, or a bracketed IPv6 literal, then at most a colon and digits.
/// Whether the host is served is then <c>AllowedHosts</c>' question, answered by the framework's own matcher.
/// </summary>
public static class HttpHost
{
    // RFC 3986's unreserved and sub-delims less those Http.Sys refuses ("*", "+", ",", ";", "=", "%").
    private static readonly System.Buffers.SearchValues<char> HostChars =
        System.Buffers.SearchValues.Create("!$&'()-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

    private static readonly System.Buffers.SearchValues<char> Ipv6Chars = System.Buffers.SearchValues.Create("0123456789abcdefABCDEF:.");

    public static bool IsWellFormed(string host)
    {
        if (host.Length == 0)
        {
            return true;
        }

        if (host[0] == '[')
        {
            var close = host.IndexOf(']', StringComparison.Ordinal);
            // [::1] is the shortest literal.
            return close >= 4
                && host.AsSpan(1, close - 1).IndexOfAnyExcept(Ipv6Chars) < 0
                && (close + 1 == host.Length || IsPort(host.AsSpan(close + 1)));
        }

        if (host[0] == ':')
        {
            return false;
        }

        var invalid = host.AsSpan().IndexOfAnyExcept(HostChars);
        return invalid < 0 || IsPort(host.AsSpan(invalid));
    }

    // ":" and at least one digit, nothing else.
    private static bool IsPort(ReadOnlySpan<char> text) =>
        text.Length >= 2 && text[0] == ':' && text[1..].IndexOfAnyExceptInRange('0', '9') < 0;
}
