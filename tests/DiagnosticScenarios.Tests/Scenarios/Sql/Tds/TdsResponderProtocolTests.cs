using System.Buffers.Binary;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using DiagnosticScenarios.Scenarios.Sql.Tds;
using Microsoft.Extensions.Logging.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Sql.Tds;

[StartsEarly("half a message left to time out: 5–6 s, waiting")]
public sealed class TdsResponderProtocolTests : IDisposable
{
    private readonly TdsResponder _responder = new(NullLogger<TdsResponder>.Instance);

    public TdsResponderProtocolTests() => _responder.Start();

    public void Dispose() => _responder.Dispose();

    [Fact]
    public void OversizedMessage_ClosesThatConnectionOnly()
    {
        using var other = new RawTdsClient(_responder.Port);
        other.Login();
        using var oversized = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveTimeout = 3_000 };
        oversized.Connect(new IPEndPoint(IPAddress.Loopback, _responder.Port));

        var sent = SendBatchPackets(oversized, TdsProtocol.MaxMessageLength + 1);
        var closed = IsClosedByServer(oversized);
        other.Send(0x01, RawTdsClient.SqlBatch("WAITFOR DELAY '00:00:00.010'"));
        var response = other.Receive();

        Assert.True(closed, $"The responder kept a connection open after {sent} bytes of one message (limit {TdsProtocol.MaxMessageLength}).");
        Assert.Equal(0x0000, RawTdsClient.FinalDoneStatus(response));
    }

    // Half a packet header, then nothing: the connection's thread had waited for the rest for good.
    [Fact]
    public void AMessageThatStopsHalfWay_ClosesThatConnectionOnly_AfterItsTimeout()
    {
        using var other = new RawTdsClient(_responder.Port);
        other.Login();
        using var stalled = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveTimeout = (int)(_responder.Limits.RequestTimeout + TimeSpan.FromSeconds(5)).TotalMilliseconds };
        stalled.Connect(new IPEndPoint(IPAddress.Loopback, _responder.Port));
        var started = Stopwatch.StartNew();

        stalled.Send([0x12, 0x01, 0x00]);
        var closed = IsClosedByServer(stalled);
        var after = started.Elapsed;
        other.Send(0x01, RawTdsClient.SqlBatch("WAITFOR DELAY '00:00:00.010'"));
        var response = other.Receive();

        Assert.True(closed, $"The responder kept a connection open {after.TotalSeconds:0} s after half a packet header.");
        Assert.True(after >= _responder.Limits.RequestTimeout - TimeSpan.FromMilliseconds(100), $"closed after {after.TotalSeconds:0.0} s, before the timeout");
        Assert.Equal(0x0000, RawTdsClient.FinalDoneStatus(response));
    }

    // The start of one SQL batch, this many payload bytes in 4 KB packets and not yet ended; stops early when the server closes the connection.
    private static int SendBatchPackets(Socket socket, int payloadLength)
    {
        var sent = 0;
        try
        {
            while (sent < payloadLength)
            {
                var length = Math.Min(4088, payloadLength - sent);
                var packet = new byte[8 + length];
                packet[0] = 0x01;
                BinaryPrimitives.WriteUInt16BigEndian(packet.AsSpan(2), (ushort)packet.Length);
                socket.Send(packet);
                sent += length;
            }
        }
        catch (SocketException)
        {
            // Reset by the server part-way: what an oversized message should get.
        }

        return sent;
    }

    private static bool IsClosedByServer(Socket socket)
    {
        try
        {
            var buffer = new byte[4096];
            return socket.Receive(buffer) == 0;
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.ConnectionAborted)
        {
            return true;
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.TimedOut)
        {
            return false;
        }
    }

    [Fact]
    public void PreLogin_AnswersEncryptionNotSupported()
    {
        using var client = new RawTdsClient(_responder.Port);

        client.Send(0x12, RawTdsClient.PreLoginRequest());
        var response = client.Receive();

        var encryption = FindPreLoginOption(response, 0x01);
        Assert.Equal([0x02], encryption);
        Assert.Equal(6, FindPreLoginOption(response, 0x00).Length);
    }

    [Fact]
    public void Login7_AnswersEnvChangeLoginAckAndDone()
    {
        using var client = new RawTdsClient(_responder.Port);
        client.Send(0x12, RawTdsClient.PreLoginRequest());
        client.Receive();

        client.Send(0x10, RawTdsClient.Login7Request());
        var response = client.Receive();

        var tokens = ReadTokenTypes(response);
        Assert.Equal(0xE3, tokens[0]);
        Assert.Contains((byte)0xAD, tokens);
        Assert.Equal(0xFD, tokens[^1]);
        var loginAck = response.AsSpan(IndexOfToken(response, 0xAD));
        Assert.Equal(1, loginAck[3]);
        Assert.Equal(0x74000004u, BinaryPrimitives.ReadUInt32BigEndian(loginAck[4..]));
        Assert.Equal(0x0000, RawTdsClient.FinalDoneStatus(response));
    }

    [Fact]
    public void SqlBatch_AnswersDoneAfterTheDelay_WhenItIsWaitforDelay()
    {
        using var client = new RawTdsClient(_responder.Port);
        client.Login();
        var started = Stopwatch.StartNew();

        client.Send(0x01, RawTdsClient.SqlBatch("WAITFOR DELAY '00:00:00.300'"));
        var response = client.Receive();

        Assert.Equal(0x0000, RawTdsClient.FinalDoneStatus(response));
        Assert.InRange(started.Elapsed, TimeSpan.FromMilliseconds(295), TimeSpan.FromSeconds(5));
        var timing = Assert.Single(_responder.WaitforTimings());
        Assert.Equal(TimeSpan.FromMilliseconds(300), timing.Delay);
    }

    [Fact]
    public void SqlBatch_IsReassembled_WhenSplitOverManyPackets()
    {
        using var client = new RawTdsClient(_responder.Port);
        client.Login();
        var text = "WAITFOR DELAY '00:00:00.050'" + new string(' ', 3000);

        client.Send(0x01, RawTdsClient.SqlBatch(text), chunk: 512);
        var response = client.Receive();

        Assert.Equal(0x0000, RawTdsClient.FinalDoneStatus(response));
        Assert.Single(_responder.WaitforTimings());
    }

    [Fact]
    public void Attention_AnswersDoneWithAttentionFlag_WhenSentDuringWaitfor()
    {
        using var client = new RawTdsClient(_responder.Port);
        client.Login();
        client.Send(0x01, RawTdsClient.SqlBatch("WAITFOR DELAY '00:00:30'"));
        Assert.True(Poll.Until(() => _responder.WaitforsRunning == 1, TimeoutExtensions.Default), "The WAITFOR never started, so the attention would interrupt nothing.");
        var started = Stopwatch.StartNew();

        client.Send(0x06, []);
        var response = client.Receive();

        Assert.Equal(0x0020, RawTdsClient.FinalDoneStatus(response));
        Assert.InRange(started.Elapsed, TimeSpan.Zero, TimeSpan.FromSeconds(5));
        Assert.Equal(1, _responder.AttentionCount);
        Assert.Empty(_responder.WaitforTimings());
    }

    [Fact]
    public void SqlBatch_AnswersErrorAndDone_WhenItIsNotWaitforDelay()
    {
        using var client = new RawTdsClient(_responder.Port);
        client.Login();

        client.Send(0x01, RawTdsClient.SqlBatch("SELECT 1"));
        var response = client.Receive();

        Assert.Equal(0xAA, response[0]);
        Assert.Equal(0x0002, RawTdsClient.FinalDoneStatus(response));
        var messageLength = BinaryPrimitives.ReadUInt16LittleEndian(response.AsSpan(9));
        var message = Encoding.Unicode.GetString(response, 11, messageLength * 2);
        Assert.Contains("SELECT 1", message, StringComparison.Ordinal);
    }

    [Fact]
    public void Stop_DropsConnectionsAndStart_ListensOnTheSamePortAgain()
    {
        var port = _responder.Port;
        using var before = new RawTdsClient(port);
        before.Login();

        _responder.Stop();
        _responder.Start();

        var dropped = Record.Exception(() =>
        {
            before.Send(0x12, RawTdsClient.PreLoginRequest());
            before.Receive();
        });
        Assert.True(dropped is EndOfStreamException or System.Net.Sockets.SocketException, $"The old connection still answered: {dropped}");
        Assert.Equal(port, _responder.Port);
        using var after = new RawTdsClient(port);
        after.Login();
    }

    [Theory]
    [InlineData("WAITFOR DELAY '00:00:01'", 1000)]
    [InlineData("waitfor delay '00:01:02.5';", 62500)]
    [InlineData("  WAITFOR   DELAY '0:0:0.05' ", 50)]
    public void ParseWaitforDelay_ReadsTheDelay_WhenTheTextIsWaitforDelay(string text, int expectedMs)
    {
        Assert.Equal(TimeSpan.FromMilliseconds(expectedMs), TdsProtocol.ParseWaitforDelay(text));
    }

    [Theory]
    [InlineData("SELECT 1")]
    [InlineData("WAITFOR DELAY '00:61:00'")]
    [InlineData("WAITFOR DELAY '00:00:01'; DROP TABLE t")]
    [InlineData("WAITFOR DELAY '\u0660\u0660:\u0660\u0660:\u0661'")] // Arabic-Indic digits: a regex's \d takes them, int.Parse does not
    public void ParseWaitforDelay_ReturnsNull_WhenTheTextIsAnythingElse(string text)
    {
        Assert.Null(TdsProtocol.ParseWaitforDelay(text));
    }

    private static byte[] FindPreLoginOption(byte[] response, byte token)
    {
        for (var i = 0; response[i] != 0xFF; i += 5)
        {
            if (response[i] == token)
            {
                var offset = BinaryPrimitives.ReadUInt16BigEndian(response.AsSpan(i + 1));
                var length = BinaryPrimitives.ReadUInt16BigEndian(response.AsSpan(i + 3));
                return response.AsSpan(offset, length).ToArray();
            }
        }

        throw new Xunit.Sdk.XunitException($"PRELOGIN option 0x{token:X2} is missing.");
    }

    // ENVCHANGE, LOGINACK and ERROR carry a two-byte length; DONE is fixed at 12 bytes after its type.
    private static List<byte> ReadTokenTypes(byte[] tokens)
    {
        var types = new List<byte>();
        var i = 0;
        while (i < tokens.Length)
        {
            var type = tokens[i];
            types.Add(type);
            i += type == 0xFD ? 13 : 3 + BinaryPrimitives.ReadUInt16LittleEndian(tokens.AsSpan(i + 1));
        }

        Assert.Equal(tokens.Length, i);
        return types;
    }

    private static int IndexOfToken(byte[] tokens, byte wanted)
    {
        var i = 0;
        while (tokens[i] != wanted)
        {
            i += tokens[i] == 0xFD ? 13 : 3 + BinaryPrimitives.ReadUInt16LittleEndian(tokens.AsSpan(i + 1));
        }

        return i;
    }
}
