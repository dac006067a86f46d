using System.Buffers.Binary;
using System.Globalization;
using System.Net.Sockets;
using System.Text;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.PoolHealth.StackCapture;
using DiagnosticScenarios.Tests.Common;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// A snapshot of a process whose diagnostic port stops answering ends with a <see cref="DiagnosisException"/> naming the
/// command it waited for and how long, instead of waiting for ever (the client library reads the port's answers with no
/// time limit). The port is a stand-in: a socket published under a running process's id that speaks the
/// diagnostic protocol's header and answers only what the test tells it to.
/// </summary>
public sealed class SilentPortTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(1);

    [LinuxFact]
    public async Task Capture_GivesUpNamingTheStart_WhenThePortNeverAnswersIt()
    {
        await using var port = await SilentPort.StartAsync(answersTheStart: false);

        await AssertCaptureGivesUpAsync(port, "the start of a session");
    }

    [LinuxFact]
    public async Task Capture_GivesUpNamingTheStop_AndClosesTheSessionsStream_WhenThePortNeverAnswersIt()
    {
        await using var port = await SilentPort.StartAsync(answersTheStart: true);

        await AssertCaptureGivesUpAsync(port, "the stop of its session");
        Assert.True(port.StopAsked, "the capture gave up before it asked for the stop");
        // A runtime blocked writing to the session's stream is released when the reader closes it.
        await port.SessionStreamClosed.TimeoutAfter(TimeSpan.FromSeconds(10));
    }

    [LinuxFact]
    public async Task AppsOwnCapture_AsksForItsSessionFromAnotherProcess_AndGivesTheReasonThatProcessGaveUp()
    {
        await using var port = await SilentPort.StartAsync(answersTheStart: false);

        // The app's recorder is the app started again (here through the .NET host, as the test host runs the app): a
        // second start of a runtime, so a bound of its own beside the patience.
        await AssertCaptureGivesUpAsync(port, "the start of a session", StackRecorder.Record, TimeSpan.FromSeconds(60));
        var clients = port.ClientProcessIds;
        Assert.NotEmpty(clients);
        Assert.DoesNotContain(Environment.ProcessId, clients);
    }

    // A capture of the port's process fails as unreachable, naming the command it waited for and its patience.
    private static async Task AssertCaptureGivesUpAsync(SilentPort port, string command, StackRecording? record = null, TimeSpan? bound = null)
    {
        var options = DiagnosisOptions.Default with { AnswerTimeout = Patience, DrainTimeout = Patience };
        // Ten times the patience bounds the whole capture: without the bound it would never return.
        var failure = await Assert.ThrowsAsync<DiagnosisException>(() => Task.Run(() => StackSnapshots.Capture(port.ProcessId, options, record)).TimeoutAfter(bound ?? Patience * 10));

        Assert.Equal(DiagnosisFailure.PortUnreachable, failure.Failure);
        Assert.Contains($"did not answer {command} within 1 s", failure.Message, StringComparison.Ordinal);
    }

    /// <summary>A diagnostic port published for a running process that is not .NET (a sleep): it reads each command and answers as told.</summary>
    private sealed class SilentPort : IAsyncDisposable
    {
        private const int HeaderSize = 20;
        private const byte EventPipeCommandSet = 0x02;
        private const byte StopTracing = 0x01;
        private static readonly byte[] Magic = Encoding.ASCII.GetBytes("DOTNET_IPC_V1\0");

        private readonly ChildProcess _owner;
        private readonly Socket _listener;
        private readonly string _path;
        private readonly bool _answersTheStart;
        private readonly List<Socket> _accepted = [];
        private readonly List<int> _clients = [];
        private readonly TaskCompletionSource _sessionStreamClosed = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly Task _serving;
        private volatile bool _stopAsked;

        private SilentPort(ChildProcess owner, bool answersTheStart)
        {
            _owner = owner;
            _answersTheStart = answersTheStart;
            // Named as a runtime names its own (the id, then a key), so the client library finds it for the id.
            _path = Path.Combine(Path.GetTempPath(), string.Create(CultureInfo.InvariantCulture, $"dotnet-diagnostic-{owner.Id}-{Environment.TickCount64}-socket"));
            _listener = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            _listener.Bind(new UnixDomainSocketEndPoint(_path));
            _listener.Listen();
            _serving = Serve();
        }

        public int ProcessId => _owner.Id;

        public bool StopAsked => _stopAsked;

        /// <summary>The process id of each client that connected (the kernel's, SO_PEERCRED).</summary>
        public IReadOnlyList<int> ClientProcessIds
        {
            get
            {
                lock (_accepted)
                {
                    return [.. _clients];
                }
            }
        }

#pragma warning disable VSTHRD003 // deliberate: this port's own background work; tests have no SynchronizationContext to deadlock on
        public Task SessionStreamClosed => _sessionStreamClosed.Task;
#pragma warning restore VSTHRD003

        public static async Task<SilentPort> StartAsync(bool answersTheStart)
        {
            var owner = ChildProcess.Start(new ChildProcessStart("sleep", ["60"]) { TimeLimit = TimeSpan.FromSeconds(60) });
            // The id must name a running process before the port is published under it.
            Assert.True(await Poll.UntilAsync(() => File.Exists($"/proc/{owner.Id}/stat"), TimeSpan.FromSeconds(10)), "sleep did not start");
            return new SilentPort(owner, answersTheStart);
        }

        public async ValueTask DisposeAsync()
        {
            _listener.Dispose();
            lock (_accepted)
            {
                _accepted.ForEach(s => s.Dispose());
            }

#pragma warning disable VSTHRD003 // deliberate: this port's own accept loop, ended by the listener's disposal above
            await _serving.TimeoutAfter(TimeSpan.FromSeconds(5));
#pragma warning restore VSTHRD003
            File.Delete(_path);
            await _owner.DisposeAsync();
        }

        // The stand-in answers on threads of its own: the test host's pool is shared with the classes running beside this
        // one, and an answer it delays past the patience would read as the silence under test.
        private Task Serve()
        {
            var served = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            new Thread(() =>
            {
                try
                {
                    while (true)
                    {
                        var connection = _listener.Accept();
                        var client = PeerProcessId(connection);
                        lock (_accepted)
                        {
                            _accepted.Add(connection);
                            _clients.Add(client);
                        }

                        new Thread(() => Serve(connection)) { IsBackground = true, Name = "silent port connection" }.Start();
                    }
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    // Disposed: the test is over.
                }

                served.TrySetResult();
            })
            { IsBackground = true, Name = "silent port" }.Start();
            return served.Task;
        }

        // One command per connection, as the runtime's port reads them.
        private void Serve(Socket connection)
        {
            try
            {
                var header = new byte[HeaderSize];
                ReadExactly(connection, header);
                if (!header.AsSpan(0, Magic.Length).SequenceEqual(Magic))
                {
                    // Not the diagnostic protocol: no answer, and the capture's message will say it waited.
                    return;
                }

                var size = BinaryPrimitives.ReadUInt16LittleEndian(header.AsSpan(14));
                ReadExactly(connection, new byte[size - HeaderSize]);
                var (commandSet, command) = (header[16], header[17]);
                if (commandSet == EventPipeCommandSet && command == StopTracing)
                {
                    // Asked to stop: never answers.
                    _stopAsked = true;
                    return;
                }

                if (!_answersTheStart)
                {
                    return;
                }

                // OK (0xFF 0x00) with the session's id; then the connection is the session's stream, on which nothing comes.
                var answer = new byte[HeaderSize + 8];
                Magic.CopyTo(answer, 0);
                BinaryPrimitives.WriteUInt16LittleEndian(answer.AsSpan(14), (ushort)answer.Length);
                answer[16] = 0xFF;
                BinaryPrimitives.WriteInt64LittleEndian(answer.AsSpan(HeaderSize), 1);
                connection.Send(answer);
                if (connection.Receive(new byte[1]) == 0)
                {
                    _sessionStreamClosed.TrySetResult();
                }
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                // The client hung up, or the test is over.
            }
        }

        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } of the other end (SOL_SOCKET 1, SO_PEERCRED 17 on Linux).
        private static int PeerProcessId(Socket connection)
        {
            var credentials = new byte[12];
            connection.GetRawSocketOption(1, 17, credentials);
            return BinaryPrimitives.ReadInt32LittleEndian(credentials);
        }

        private static void ReadExactly(Socket connection, byte[] buffer)
        {
            for (var read = 0; read < buffer.Length;)
            {
                var got = connection.Receive(buffer, read, buffer.Length - read, SocketFlags.None);
                if (got == 0)
                {
                    throw new SocketException((int)SocketError.ConnectionReset);
                }

                read += got;
            }
        }
    }
}
