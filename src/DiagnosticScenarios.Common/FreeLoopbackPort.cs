using System.Net;
using System.Net.Sockets;

namespace DiagnosticScenarios.Common;

/// <summary>A loopback port nobody listens on right now, for a child process to bind.</summary>
public static class FreeLoopbackPort
{
    /// <remarks>Another process may take it between this call and the child's bind: a caller that starts a server retries on another port.</remarks>
    public static int Pick()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
