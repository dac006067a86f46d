using System.Buffers.Binary;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using DiagnosticScenarios.OffPool;

namespace DiagnosticScenarios.Scenarios.Sql.Tds;

/// <summary>One client connection, served on its own thread: PRELOGIN, LOGIN7, then SQL batches and attentions.</summary>
/// <remarks>Until it has logged in, a session waiting for its next message may be shed for another: after, it is a pool's.</remarks>
internal sealed class TdsSession(OffPoolConnection connection, TdsCounters counters)
{
    private const int ErrorNumber = 50000;
    private const byte ErrorClass = 16;

    private int _packetSize = TdsProtocol.DefaultPacketSize;
    private bool _loggedIn;

    public void Run()
    {
        while (TdsProtocol.ReadMessage(connection, sheddable: !_loggedIn) is { } message)
        {
            switch (message.Type)
            {
                case TdsProtocol.PreLogin:
                    Send(BuildPreLoginResponse());
                    break;
                case TdsProtocol.Login7:
                    _packetSize = ReadRequestedPacketSize(message.Payload);
                    Send(BuildLoginResponse(_packetSize));
                    _loggedIn = true;
                    break;
                case TdsProtocol.SqlBatch:
                    RunBatch(message.Payload);
                    break;
                case TdsProtocol.Attention:
                    // Nothing is running (the batch finished as the attention crossed it): still acknowledge it.
                    counters.RecordAttention();
                    Send(Done(TdsProtocol.DoneAttention));
                    break;
                default:
                    Send(Error($"The embedded TDS responder does not handle TDS messages of type 0x{message.Type:X2}."));
                    break;
            }
        }
    }

    private void RunBatch(byte[] payload)
    {
        var received = Stopwatch.GetTimestamp();
        var text = TdsProtocol.ReadBatchText(payload);
        if (TdsProtocol.ParseWaitforDelay(text) is not { } delay)
        {
            Send(Error($"The embedded TDS responder only understands WAITFOR DELAY 'hh:mm:ss[.fff]'; it received: {Shorten(text)}"));
            return;
        }

        var due = received + (long)(delay.TotalSeconds * Stopwatch.Frequency);
        TdsMessage? interrupted;
        counters.WaitforStarted();
        try
        {
            interrupted = WaitUntil(due);
        }
        finally
        {
            counters.WaitforEnded();
        }

        if (interrupted is { } interruption)
        {
            // An attention (command timeout, cancellation) ends the WAITFOR early; its DONE replaces the batch's.
            if (interruption.Type != TdsProtocol.Attention)
            {
                throw new InvalidDataException($"A TDS message of type 0x{interruption.Type:X2} arrived while a batch was running.");
            }

            counters.RecordAttention();
            Send(Done(TdsProtocol.DoneAttention));
            return;
        }

        // Recorded as the DONE goes out, before the client can read it and look at the timings.
        counters.Record(new WaitforTiming(delay, due, Stopwatch.GetTimestamp()));
        Send(Done(TdsProtocol.DoneFinal));
    }

    /// <summary>Blocks this connection's own thread until <paramref name="due"/>, or until the client sends something.</summary>
    /// <returns>The message that interrupted the wait, or null when the time came.</returns>
    private TdsMessage? WaitUntil(long due)
    {
        while (true)
        {
            var remaining = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due);
            if (remaining <= TimeSpan.Zero)
            {
                return null;
            }

            // poll(2) on this dedicated thread: the kernel wakes it at the deadline or when bytes arrive.
            var micros = (int)Math.Min(int.MaxValue, Math.Ceiling(remaining.TotalMicroseconds));
            if (connection.Socket.Poll(micros, System.Net.Sockets.SelectMode.SelectRead))
            {
                return TdsProtocol.ReadMessageBegun(connection) ?? throw new EndOfStreamException("The client closed the connection during a WAITFOR.");
            }
        }
    }

    private void Send(byte[] tokens) => TdsProtocol.WriteMessage(connection.Socket, TdsProtocol.TabularResult, tokens, _packetSize);

    private static int ReadRequestedPacketSize(byte[] login)
    {
        // LOGIN7: Length(4) TDSVersion(4) PacketSize(4) ... all little-endian.
        var requested = login.Length >= 12 ? BinaryPrimitives.ReadInt32LittleEndian(login.AsSpan(8)) : 0;
        return requested is >= 512 and <= 32767 ? requested : TdsProtocol.DefaultPacketSize;
    }

    private static byte[] BuildPreLoginResponse()
    {
        // Option table (token, big-endian offset and length), terminator, then the option data.
        (byte Token, byte[] Data)[] options =
        [
            (TdsProtocol.PreLoginVersion, [16, 0, 0x0F, 0xA0, 0, 0]),
            // Encryption not supported: with Encrypt=False the client then uses no TLS at all, not even for LOGIN7.
            (TdsProtocol.PreLoginEncryption, [TdsProtocol.EncryptNotSupported]),
            (TdsProtocol.PreLoginInstOpt, [0]),
            (TdsProtocol.PreLoginThreadId, []),
            (TdsProtocol.PreLoginMars, [0]),
        ];

        var table = new MemoryStream();
        var data = new MemoryStream();
        var offset = (options.Length * 5) + 1;
        foreach (var (token, value) in options)
        {
            table.WriteByte(token);
            table.WriteByte((byte)(offset >> 8));
            table.WriteByte((byte)offset);
            table.WriteByte((byte)(value.Length >> 8));
            table.WriteByte((byte)value.Length);
            data.Write(value);
            offset += value.Length;
        }

        table.WriteByte(TdsProtocol.PreLoginTerminator);
        data.WriteTo(table);
        return table.ToArray();
    }

    private static byte[] BuildLoginResponse(int packetSize)
    {
        var stream = new MemoryStream();
        using var writer = new BinaryWriter(stream, Encoding.Unicode);

        WriteEnvChange(writer, type: 1, newValue: "master", oldValue: "");

        // SQL collation (Latin1_General CI_AS), a B_VARBYTE of 5 bytes; the client expects one after login.
        byte[] collation = [0x09, 0x04, 0xD0, 0x00, 0x34];
        writer.Write(TdsProtocol.TokenEnvChange);
        writer.Write((ushort)(1 + 1 + collation.Length + 1));
        writer.Write((byte)7);
        writer.Write((byte)collation.Length);
        writer.Write(collation);
        writer.Write((byte)0);

        // LOGINACK: interface 1 (T-SQL), TDS 7.4 (big-endian here, unlike LOGIN7), program name and version.
        const string programName = "DiagnosticScenarios TDS responder";
        writer.Write(TdsProtocol.TokenLoginAck);
        writer.Write((ushort)(1 + 4 + 1 + (programName.Length * 2) + 4));
        writer.Write((byte)1);
        writer.Write([0x74, 0x00, 0x00, 0x04]);
        TdsProtocol.WriteBVarChar(writer, programName);
        writer.Write([16, 0, 0x0F, 0xA0]);

        WriteEnvChange(writer, type: 4, newValue: packetSize.ToString(CultureInfo.InvariantCulture), oldValue: packetSize.ToString(CultureInfo.InvariantCulture));
        TdsProtocol.WriteDone(writer, TdsProtocol.DoneFinal);
        writer.Flush();
        return stream.ToArray();
    }

    private static void WriteEnvChange(BinaryWriter writer, byte type, string newValue, string oldValue)
    {
        writer.Write(TdsProtocol.TokenEnvChange);
        writer.Write((ushort)(1 + 1 + (newValue.Length * 2) + 1 + (oldValue.Length * 2)));
        writer.Write(type);
        TdsProtocol.WriteBVarChar(writer, newValue);
        TdsProtocol.WriteBVarChar(writer, oldValue);
    }

    private static byte[] Error(string message)
    {
        const string serverName = "embedded";
        var stream = new MemoryStream();
        using var writer = new BinaryWriter(stream, Encoding.Unicode);
        writer.Write(TdsProtocol.TokenError);
        writer.Write((ushort)(4 + 1 + 1 + 2 + (message.Length * 2) + 1 + (serverName.Length * 2) + 1 + 4));
        writer.Write(ErrorNumber);
        writer.Write((byte)1);
        writer.Write(ErrorClass);
        writer.Write((ushort)message.Length);
        writer.Write(Encoding.Unicode.GetBytes(message));
        TdsProtocol.WriteBVarChar(writer, serverName);
        TdsProtocol.WriteBVarChar(writer, "");
        writer.Write(1);
        TdsProtocol.WriteDone(writer, TdsProtocol.DoneError);
        writer.Flush();
        return stream.ToArray();
    }

    private static byte[] Done(ushort status)
    {
        var stream = new MemoryStream();
        using var writer = new BinaryWriter(stream);
        TdsProtocol.WriteDone(writer, status);
        writer.Flush();
        return stream.ToArray();
    }

    private static string Shorten(string text) => text.Length <= 200 ? text : string.Concat(text.AsSpan(0, 200), "…");
}
