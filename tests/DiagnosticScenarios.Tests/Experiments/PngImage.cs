using System.Buffers.Binary;
using System.IO.Compression;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// Reads the PNG a browser's canvas writes (8-bit RGBA, not interlaced) into pixels, so a test can look at what the
/// exported image shows without an imaging library.
/// </summary>
internal sealed class PngImage
{
    private static readonly byte[] Signature = [0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A];
    private const int BytesPerPixel = 4;

    private readonly byte[] _pixels;

    private PngImage(int width, int height, byte[] pixels) => (Width, Height, _pixels) = (width, height, pixels);

    public int Width { get; }

    public int Height { get; }

    /// <exception cref="InvalidDataException">Not a PNG, or one of a kind a canvas does not write.</exception>
    public static PngImage Read(byte[] png)
    {
        ArgumentNullException.ThrowIfNull(png);
        if (png.Length < 33 || !png.AsSpan(0, 8).SequenceEqual(Signature))
        {
            throw new InvalidDataException("Not a PNG: the signature is missing.");
        }

        int width = 0, height = 0;
        using var compressed = new MemoryStream();
        for (var at = 8; at + 12 <= png.Length;)
        {
            var length = BinaryPrimitives.ReadInt32BigEndian(png.AsSpan(at));
            var type = System.Text.Encoding.ASCII.GetString(png, at + 4, 4);
            var data = png.AsSpan(at + 8, length);
            if (type == "IHDR")
            {
                (width, height) = (BinaryPrimitives.ReadInt32BigEndian(data), BinaryPrimitives.ReadInt32BigEndian(data[4..]));
                if (data[8] != 8 || data[9] != 6 || data[12] != 0)
                {
                    throw new InvalidDataException($"A PNG of bit depth {data[8]}, colour type {data[9]}, interlace {data[12]}: only 8-bit RGBA, not interlaced, is read here.");
                }
            }
            else if (type == "IDAT")
            {
                compressed.Write(data);
            }

            at += 12 + length;
        }

        compressed.Position = 0;
        using var inflate = new ZLibStream(compressed, CompressionMode.Decompress);
        using var raw = new MemoryStream();
        inflate.CopyTo(raw);
        return new PngImage(width, height, Unfilter(raw.GetBuffer().AsSpan(0, (int)raw.Length), width, height));
    }

    /// <summary>How many pixels in the rectangle are within <paramref name="tolerance"/> of the colour, channel by channel.</summary>
    public int Count(int x, int y, int width, int height, (byte R, byte G, byte B) colour, int tolerance = 3)
    {
        var count = 0;
        for (var row = Math.Max(0, y); row < Math.Min(Height, y + height); row++)
        {
            for (var column = Math.Max(0, x); column < Math.Min(Width, x + width); column++)
            {
                var p = (row * Width + column) * BytesPerPixel;
                count += Math.Abs(_pixels[p] - colour.R) <= tolerance && Math.Abs(_pixels[p + 1] - colour.G) <= tolerance && Math.Abs(_pixels[p + 2] - colour.B) <= tolerance ? 1 : 0;
            }
        }

        return count;
    }

    // Each scanline starts with its filter type (PNG specification, section 9).
    private static byte[] Unfilter(ReadOnlySpan<byte> raw, int width, int height)
    {
        var stride = width * BytesPerPixel;
        var pixels = new byte[stride * height];
        for (var row = 0; row < height; row++)
        {
            var filter = raw[row * (stride + 1)];
            var line = raw.Slice(row * (stride + 1) + 1, stride);
            var current = pixels.AsSpan(row * stride, stride);
            var previous = row == 0 ? new byte[stride] : pixels.AsSpan((row - 1) * stride, stride);
            for (var i = 0; i < stride; i++)
            {
                int left = i >= BytesPerPixel ? current[i - BytesPerPixel] : 0;
                int up = previous[i];
                int upLeft = i >= BytesPerPixel ? previous[i - BytesPerPixel] : 0;
                current[i] = (byte)(line[i] + filter switch
                {
                    0 => 0,
                    1 => left,
                    2 => up,
                    3 => (left + up) / 2,
                    4 => Paeth(left, up, upLeft),
                    _ => throw new InvalidDataException($"Scanline {row} has filter type {filter}."),
                });
            }
        }

        return pixels;
    }

    private static int Paeth(int a, int b, int c)
    {
        var p = a + b - c;
        var (pa, pb, pc) = (Math.Abs(p - a), Math.Abs(p - b), Math.Abs(p - c));
        return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
}
