using System.Net.Sockets;

namespace DiagnosticScenarios.PoolHealth.Metrics;

/// <summary>
/// The OTLP/HTTP exporter's client, whose sends on a kept-alive connection do not wait for the thread pool after the
/// connection's idle check. The SDK's reader exports from a thread of its own with a synchronous
/// <see cref="HttpClient.Send(HttpRequestMessage)"/>, which writes and reads the socket on that thread, except after
/// .NET's connection pool has checked the idle connection: every quarter of its idle timeout (a minute, so every 15 s) it
/// starts an asynchronous read on each idle connection, to see it close, and the next send takes its answer from that
/// read, whose completion only a pool thread delivers on Linux. Here that read blocks on a thread of its own instead.
/// Opening a connection still goes through the pool (the handler opens it there whatever the send).
/// </summary>
/// <remarks>
/// For synchronous sends over HTTP/1.1 only, where the connection's asynchronous reads are that check: an asynchronous
/// send, or HTTP/2, reads asynchronously throughout and would start a thread for every read.
/// </remarks>
internal static class OtlpHttpClient
{
    /// <summary>A client as the SDK's own factory makes it (its timeout the exporter's), over connections that read on threads of their own.</summary>
    public static HttpClient Create(TimeSpan timeout) => new(new SocketsHttpHandler { ConnectCallback = ConnectAsync }) { Timeout = timeout };

    private static async ValueTask<Stream> ConnectAsync(SocketsHttpConnectionContext context, CancellationToken cancellationToken)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await socket.ConnectAsync(context.DnsEndPoint, cancellationToken).ConfigureAwait(false);
            return new OwnThreadReadStream(socket);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>
    /// A network stream whose asynchronous reads block on a thread of their own. Still a <see cref="NetworkStream"/>, so
    /// the handler checks a connection before a synchronous send by polling its socket, as it does for its own.
    /// </summary>
    private sealed class OwnThreadReadStream(Socket socket) : NetworkStream(socket, ownsSocket: true)
    {
        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            var read = new TaskCompletionSource<int>();
            var thread = new Thread(() =>
            {
                try
                {
                    // A zero-byte read completes when data or the end of the stream arrives, as the socket's own does.
                    read.SetResult(buffer.IsEmpty ? WaitReadable() : Read(buffer.Span));
                }
                catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
                {
                    read.SetException(e);
                }
            })
            {
                IsBackground = true,
                Name = "OTLP connection read",
            };
            thread.Start();
            return new ValueTask<int>(read.Task);
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        private int WaitReadable()
        {
            Socket.Poll(-1, SelectMode.SelectRead);
            return 0;
        }
    }
}
