using System.Buffers.Binary;
using System.Globalization;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using DiagnosticScenarios.OffPool;

namespace DiagnosticScenarios.Scenarios.Sql.Tds;

/// <summary>The few MS-TDS constants the responder needs (packet types, tokens, DONE status bits).</summary>
public static class TdsProtocol
{
    public const int HeaderLength = 8;
    public const int DefaultPacketSize = 4096;

    /// <summary>The largest message the responder reassembles: a WAITFOR batch or a login is a few hundred bytes.</summary>
    public const int MaxMessageLength = 64 * 1024;

    public const byte SqlBatch = 0x01;
    public const byte TabularResult = 0x04;
    public const byte Attention = 0x06;
    public const byte Login7 = 0x10;
    public const byte PreLogin = 0x12;

    public const byte StatusEndOfMessage = 0x01;

    public const byte TokenEnvChange = 0xE3;
    public const byte TokenLoginAck = 0xAD;
    public const byte TokenError = 0xAA;
    public const byte TokenDone = 0xFD;

    public const ushort DoneFinal = 0x0000;
    public const ushort DoneError = 0x0002;
    public const ushort DoneAttention = 0x0020;

    public const byte PreLoginVersion = 0x00;
    public const byte PreLoginEncryption = 0x01;
    public const byte PreLoginInstOpt = 0x02;
    public const byte PreLoginThreadId = 0x03;
    public const byte PreLoginMars = 0x04;
    public const byte PreLoginTerminator = 0xFF;
    public const byte EncryptNotSupported = 0x02;

    /// <summary>
    /// Waits for the next message within the connection's first-byte or idle deadline, then reads it whole within its
    /// request deadline, reassembling it from as many packets as the sender split it into.
    /// </summary>
    /// <param name="connection">The session's connection.</param>
    /// <param name="sheddable">Whether the listener may close the connection while it waits, for a new one.</param>
    /// <returns>The message, or null when the peer closed the connection (or let it idle out) before a new message began.</returns>
    /// <exception cref="InvalidDataException">The message is malformed or longer than <see cref="MaxMessageLength"/>.</exception>
    /// <exception cref="TimeoutException">A message begun did not arrive whole in time.</exception>
    public static TdsMessage? ReadMessage(OffPoolConnection connection, bool sheddable)
    {
        connection.AwaitRequest(sheddable);
        return ReadWholeMessage(connection);
    }

    /// <summary>Reads a message whose first bytes are waiting (one sent while a batch runs), within its request deadline.</summary>
    public static TdsMessage? ReadMessageBegun(OffPoolConnection connection) =>
        connection.BeginRequest() ? ReadWholeMessage(connection) : null;

    private static TdsMessage? ReadWholeMessage(OffPoolConnection connection)
    {
        var header = new byte[HeaderLength];
        using var payload = new MemoryStream();
        byte type = 0;
        var first = true;
        while (true)
        {
            if (!ReadExactly(connection, header, allowCleanEnd: first))
            {
                return null;
            }

            var packetType = header[0];
            var length = BinaryPrimitives.ReadUInt16BigEndian(header.AsSpan(2));
            if (length < HeaderLength)
            {
                throw new InvalidDataException($"TDS packet length {length} is shorter than its header.");
            }

            if (first)
            {
                type = packetType;
                first = false;
            }
            else if (packetType != type)
            {
                throw new InvalidDataException($"TDS packet of type 0x{packetType:X2} inside a message of type 0x{type:X2}.");
            }

            if (payload.Length + length - HeaderLength > MaxMessageLength)
            {
                throw new InvalidDataException($"TDS message of type 0x{type:X2} is longer than {MaxMessageLength} bytes.");
            }

            var body = new byte[length - HeaderLength];
            ReadExactly(connection, body, allowCleanEnd: false);
            payload.Write(body);
            if ((header[1] & StatusEndOfMessage) != 0)
            {
                return new TdsMessage(type, payload.ToArray());
            }
        }
    }

    /// <summary>Writes a message as packets of at most <paramref name="packetSize"/> bytes, the last one flagged end-of-message.</summary>
    public static void WriteMessage(Socket socket, byte type, ReadOnlySpan<byte> payload, int packetSize)
    {
        var room = packetSize - HeaderLength;
        byte packetId = 1;
        var offset = 0;
        do
        {
            var chunk = Math.Min(room, payload.Length - offset);
            var last = offset + chunk == payload.Length;
            var packet = new byte[HeaderLength + chunk];
            packet[0] = type;
            packet[1] = last ? StatusEndOfMessage : (byte)0;
            BinaryPrimitives.WriteUInt16BigEndian(packet.AsSpan(2), (ushort)packet.Length);
            packet[6] = packetId++;
            payload.Slice(offset, chunk).CopyTo(packet.AsSpan(HeaderLength));
            SendAll(socket, packet);
            offset += chunk;
        }
        while (offset < payload.Length);
    }

    /// <summary>A DONE token: status, current command, 8-byte row count (TDS 7.2+).</summary>
    public static void WriteDone(BinaryWriter writer, ushort status)
    {
        writer.Write(TokenDone);
        writer.Write(status);
        writer.Write((ushort)0);
        writer.Write(0L);
    }

    /// <summary>B_VARCHAR: a one-byte character count, then UTF-16LE.</summary>
    public static void WriteBVarChar(BinaryWriter writer, string value)
    {
        writer.Write((byte)value.Length);
        writer.Write(Encoding.Unicode.GetBytes(value));
    }

    /// <summary>The text of a SQL batch: ALL_HEADERS (TDS 7.2+, a total length that counts itself), then UTF-16LE.</summary>
    public static string ReadBatchText(byte[] payload)
    {
        var headersLength = payload.Length >= 4 ? BinaryPrimitives.ReadInt32LittleEndian(payload) : 0;
        if (headersLength < 4 || headersLength > payload.Length)
        {
            throw new InvalidDataException("The SQL batch has no valid ALL_HEADERS block.");
        }

        return Encoding.Unicode.GetString(payload, headersLength, payload.Length - headersLength);
    }

    /// <summary>Parses <c>WAITFOR DELAY 'hh:mm:ss[.fff]'</c>; null for anything else.</summary>
    public static TimeSpan? ParseWaitforDelay(string text)
    {
        var match = WaitforDelayPattern.Match(text);
        if (!match.Success)
        {
            return null;
        }

        var hours = int.Parse(match.Groups["h"].Value, CultureInfo.InvariantCulture);
        var minutes = int.Parse(match.Groups["m"].Value, CultureInfo.InvariantCulture);
        var seconds = int.Parse(match.Groups["s"].Value, CultureInfo.InvariantCulture);
        var fraction = match.Groups["f"].Success ? match.Groups["f"].Value.PadRight(3, '0') : "0";
        if (hours > 23 || minutes > 59 || seconds > 59)
        {
            return null;
        }

        return new TimeSpan(0, hours, minutes, seconds, int.Parse(fraction, CultureInfo.InvariantCulture));
    }

    private static bool ReadExactly(OffPoolConnection connection, byte[] buffer, bool allowCleanEnd)
    {
        var read = 0;
        while (read < buffer.Length)
        {
            var n = connection.Receive(buffer.AsSpan(read));
            if (n == 0)
            {
                if (read == 0 && allowCleanEnd)
                {
                    return false;
                }

                throw new EndOfStreamException("The TDS peer closed the connection in the middle of a packet.");
            }

            read += n;
        }

        return true;
    }

    private static void SendAll(Socket socket, byte[] packet)
    {
        var sent = 0;
        while (sent < packet.Length)
        {
            sent += socket.Send(packet, sent, packet.Length - sent, SocketFlags.None);
        }
    }

    // [0-9], not \d: \d takes any Unicode digit ('٠٠:٠٠:٠١'), which int.Parse refuses. NonBacktracking: linear in the
    // batch's length, where the backtracking engine takes time quadratic in the spaces after the statement.
    private static readonly Regex WaitforDelayPattern = new(
        @"^\s*WAITFOR\s+DELAY\s+'(?<h>[0-9]{1,2}):(?<m>[0-9]{1,2}):(?<s>[0-9]{1,2})(?:\.(?<f>[0-9]{1,3}))?'\s*;?\s*$",
        RegexOptions.IgnoreCase | RegexOptions.CultureInvariant | RegexOptions.NonBacktracking);
}

/// <summary>One reassembled TDS message: its packet type and the concatenated payloads.</summary>
public sealed record TdsMessage(byte Type, byte[] Payload);
