using System.Net.Sockets;
using Microsoft.AspNetCore.Connections.Features;

namespace DiagnosticScenarios.Scenarios.Mock;

/// <summary>
/// Notices that a request's client has closed its connection, from a dedicated thread. <c>RequestAborted</c> fires only once a
/// pool thread has read the closed socket, which a starved pool may not do for minutes: exactly when dropping the client's work matters.
/// </summary>
public sealed class ClientDisconnectWatch : IDisposable
{
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(200);

    private readonly Socket _socket;
    private readonly CancellationTokenSource _gone;
    private volatile bool _stopped;

    private ClientDisconnectWatch(Socket socket, CancellationTokenSource gone)
    {
        _socket = socket;
        _gone = gone;
    }

    /// <summary>
    /// Cancels <paramref name="gone"/> when the client of <paramref name="context"/> closes its connection, until disposed.
    /// Null when the server gives no socket (e.g. an in-memory test server); <c>RequestAborted</c> is then the only signal.
    /// </summary>
    public static ClientDisconnectWatch? Start(HttpContext context, CancellationTokenSource gone)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (context.Features.Get<IConnectionSocketFeature>()?.Socket is not { } socket)
        {
            return null;
        }

        var watch = new ClientDisconnectWatch(socket, gone);
        new Thread(watch.Run, maxStackSize: 256 * 1024) { Name = "client-disconnect-watch", IsBackground = true }.Start();
        return watch;
    }

    public void Dispose() => _stopped = true;

    private void Run()
    {
        while (!_stopped)
        {
            if (IsClosedByPeer(_socket))
            {
                try
                {
                    _gone.Cancel();
                }
                catch (ObjectDisposedException)
                {
                    // The request finished between the poll and the cancel.
                }

                return;
            }

            Thread.Sleep(PollInterval);
        }
    }

    // Readable with nothing to read is how a socket reports the peer's FIN; polling reads nothing, so the server's own reads are untouched.
    private static bool IsClosedByPeer(Socket socket)
    {
        try
        {
            return socket.Poll(0, SelectMode.SelectRead) && socket.Available == 0;
        }
        catch (Exception e) when (e is ObjectDisposedException or SocketException)
        {
            return true;
        }
    }
}
