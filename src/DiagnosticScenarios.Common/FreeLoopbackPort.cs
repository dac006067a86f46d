using System.Net;
using System.Net.Sockets;

namespace DiagnosticScenarios.Common;

/// <summary>A loopback port nobody listens on right now, for a child process to bind.</summary>
public static class FreeLoopbackPort
{
    // Below every common ephemeral range (Linux from 32768, macOS and Windows from 49152) and above the registered
    // services most machines run: neither a bind to port 0 nor an outgoing connection is ever handed one of these.
    private const int BelowEphemeralFrom = 20000;
    private const int BelowEphemeralTo = 32768;

    /// <remarks>Another process may take it between this call and the child's bind: a caller that starts a server retries on another port.</remarks>
    public static int Pick()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>
    /// A free port outside the ephemeral range, for a server that binds it long after the pick: a port from
    /// <see cref="Pick"/> goes back to the pool the system hands out for every port-0 bind and outgoing connection,
    /// and a busy minute may hand it to someone else first.
    /// </summary>
    public static int PickBelowTheEphemeralRange()
    {
        for (var attempt = 0; attempt < 100; attempt++)
        {
            var port = Random.Shared.Next(BelowEphemeralFrom, BelowEphemeralTo);
            try
            {
                using var listener = new TcpListener(IPAddress.Loopback, port);
                listener.Start();
                return port;
            }
            catch (SocketException)
            {
                // Taken: another.
            }
        }

        throw new InvalidOperationException($"No free loopback port between {BelowEphemeralFrom} and {BelowEphemeralTo} in 100 tries.");
    }
}
