using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace DiagnosticScenarios.Tests.Scenarios.Sql.Tds;

/// <summary>
/// A TDS client written from the specification independently of the responder's own framing code, so the
/// protocol tests check the bytes on the wire rather than the responder against itself.
/// </summary>
internal sealed class RawTdsClient : IDisposable
{
    private static readonly TimeSpan ReadTimeout = TimeSpan.FromSeconds(30);
    private readonly Socket _socket;

    public RawTdsClient(int port)
    {
        _socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
        {
            ReceiveTimeout = (int)ReadTimeout.TotalMilliseconds,
        };
        _socket.Connect(new IPEndPoint(IPAddress.Loopback, port));
    }

    /// <summary>Sends <paramref name="payload"/> as packets carrying at most <paramref name="chunk"/> payload bytes each.</summary>
    public void Send(byte type, byte[] payload, int chunk = 4088)
    {
        byte packetId = 1;
        var offset = 0;
        do
        {
            var length = Math.Min(chunk, payload.Length - offset);
            var packet = new byte[8 + length];
            packet[0] = type;
            packet[1] = (byte)(offset + length == payload.Length ? 0x01 : 0x00);
            BinaryPrimitives.WriteUInt16BigEndian(packet.AsSpan(2), (ushort)packet.Length);
            packet[6] = packetId++;
            Array.Copy(payload, offset, packet, 8, length);
            _socket.Send(packet);
            offset += length;
        }
        while (offset < payload.Length);
    }

    /// <summary>Reads one response message (type 0x04) up to its end-of-message packet.</summary>
    public byte[] Receive()
    {
        using var message = new MemoryStream();
        while (true)
        {
            var header = ReadExactly(8);
            Assert.Equal(0x04, header[0]);
            var body = ReadExactly(BinaryPrimitives.ReadUInt16BigEndian(header.AsSpan(2)) - 8);
            message.Write(body);
            if ((header[1] & 0x01) != 0)
            {
                return message.ToArray();
            }
        }
    }

    public void Login()
    {
        Send(0x12, PreLoginRequest());
        Receive();
        Send(0x10, Login7Request());
        Receive();
    }

    /// <summary>The connection, for a test that watches whether the responder closed it.</summary>
    public Socket Socket => _socket;

    public void Dispose() => _socket.Dispose();

    /// <summary>VERSION and ENCRYPTION (ENCRYPT_OFF, as SqlClient sends for Encrypt=False), then the terminator.</summary>
    public static byte[] PreLoginRequest() =>
    [
        0x00, 0x00, 0x0B, 0x00, 0x06,
        0x01, 0x00, 0x11, 0x00, 0x01,
        0xFF,
        0x07, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00,
    ];

    /// <summary>The fixed part of LOGIN7 that matters here: length, TDS 7.4 (little-endian), packet size 4096.</summary>
    public static byte[] Login7Request()
    {
        var login = new byte[94];
        BinaryPrimitives.WriteInt32LittleEndian(login, login.Length);
        BinaryPrimitives.WriteUInt32LittleEndian(login.AsSpan(4), 0x74000004);
        BinaryPrimitives.WriteInt32LittleEndian(login.AsSpan(8), 4096);
        return login;
    }

    /// <summary>A SQL batch: ALL_HEADERS with one transaction-descriptor header (22 bytes), then UTF-16LE text.</summary>
    public static byte[] SqlBatch(string text)
    {
        var headers = new byte[22];
        BinaryPrimitives.WriteInt32LittleEndian(headers, 22);
        BinaryPrimitives.WriteInt32LittleEndian(headers.AsSpan(4), 18);
        BinaryPrimitives.WriteUInt16LittleEndian(headers.AsSpan(8), 2);
        BinaryPrimitives.WriteInt32LittleEndian(headers.AsSpan(18), 1);
        return [.. headers, .. Encoding.Unicode.GetBytes(text)];
    }

    /// <summary>The status of the DONE token that ends <paramref name="tokens"/> (DONE is 13 bytes in TDS 7.2+).</summary>
    public static ushort FinalDoneStatus(byte[] tokens)
    {
        Assert.True(tokens.Length >= 13, "The response is too short to end with a DONE token.");
        var done = tokens.AsSpan(tokens.Length - 13);
        Assert.Equal(0xFD, done[0]);
        return BinaryPrimitives.ReadUInt16LittleEndian(done[1..]);
    }

    private byte[] ReadExactly(int count)
    {
        var buffer = new byte[count];
        var read = 0;
        while (read < count)
        {
            var n = _socket.Receive(buffer, read, count - read, SocketFlags.None);
            if (n == 0)
            {
                throw new EndOfStreamException("The responder closed the connection.");
            }

            read += n;
        }

        return buffer;
    }
}
