using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;

namespace DiagnosticScenarios.LoadRunner.Load;

/// <summary>
/// A request body of a known length sent in pieces spread evenly over a duration, each flushed to the socket as it is
/// written: the first at once, the last at the end. A server that reads the body waits for every piece.
/// </summary>
public sealed class SlowUploadContent : HttpContent
{
    /// <summary>How far apart the pieces go, about; a body shorter than its pieces goes a byte at a time.</summary>
    public static readonly TimeSpan PieceInterval = TimeSpan.FromMilliseconds(50);

    private readonly int _bytes;
    private readonly TimeSpan _over;

    public SlowUploadContent(int bytes, TimeSpan over)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        _bytes = bytes;
        _over = over;
        Headers.ContentType = new MediaTypeHeaderValue("text/plain");
    }

    /// <summary>How many pieces the body goes in: one per <see cref="PieceInterval"/> of the upload and one more, at most one per byte.</summary>
    public int Pieces => Math.Max(1, Math.Min(_bytes, (int)Math.Ceiling(_over / PieceInterval) + 1));

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
        SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
    {
        var body = new byte[_bytes];
        body.AsSpan().Fill((byte)'x');
        var pieces = Pieces;
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < pieces; i++)
        {
            if (i > 0)
            {
                // Due times count from the first piece, so a late timer does not push every later piece back.
                var wait = _over * i / (pieces - 1) - clock.Elapsed;
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, cancellationToken);
                }
            }

            var start = (int)((long)_bytes * i / pieces);
            var end = (int)((long)_bytes * (i + 1) / pieces);
            await stream.WriteAsync(body.AsMemory(start, end - start), cancellationToken);
            await stream.FlushAsync(cancellationToken);
        }
    }

    protected override bool TryComputeLength(out long length)
    {
        length = _bytes;
        return true;
    }
}
