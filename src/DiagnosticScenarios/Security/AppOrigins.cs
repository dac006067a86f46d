using System.Net;

namespace DiagnosticScenarios.Security;

/// <summary>
/// The app's own web origins besides the one a request arrived on: the live page's server, which listens on a port of its
/// own. The controls' gate and their CORS policy admit a request from it; nothing else.
/// </summary>
public sealed class AppOrigins
{
    private volatile int _livePagePort;

    /// <summary>Called by the live page's server once it listens.</summary>
    public void LivePageListensOn(int port) => _livePagePort = port;

    /// <summary>Whether <paramref name="origin"/> (<c>http://localhost:5002</c>) is the live page's: http, a loopback name, its port.</summary>
    public bool IsLivePage(string? origin) =>
        _livePagePort != 0
        && Uri.TryCreate(origin, UriKind.Absolute, out var uri)
        && uri.Scheme == Uri.UriSchemeHttp
        && IsLoopbackName(uri.Host)
        && uri.Port == _livePagePort;

    /// <summary><c>localhost</c> or a loopback address, the names a DNS-rebinding page cannot take.</summary>
    public static bool IsLoopbackName(string host) =>
        string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase)
        || IPAddress.TryParse(host.Trim('[', ']'), out var address) && IPAddress.IsLoopback(address);
}
