using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace DiagnosticScenarios.Scenarios.Sql.Tds;

/// <summary>
/// A minimal SQL Server stand-in on 127.0.0.1 that Microsoft.Data.SqlClient talks to over real TCP:
/// it logs anyone in and answers <c>WAITFOR DELAY</c> after the delay.
/// </summary>
/// <remarks>
/// It runs on threads of its own (one accept thread, one thread per connection, blocking socket I/O) and
/// never on the app's thread pool: the scenarios starve that pool on purpose, and a database that answered
/// late because of it would distort the very thing being measured.
/// </remarks>
/// <param name="logger">Where it says it started, stopped, and refused or ended a connection.</param>
/// <param name="metrics">Where each WAITFOR's lateness goes, so a scrape shows the responder kept time; none outside the app.</param>
public sealed partial class TdsResponder(ILogger<TdsResponder> logger, SqlScenarioMetrics? metrics = null) : IDisposable
{
    /// <summary>Above the largest client pool (200) with room for a second app or test client; more are refused.</summary>
    public const int MaxConnections = 512;

    private const int TimingCapacity = 10_000;

    private readonly Lock _gate = new();
    private readonly ConcurrentDictionary<Socket, byte> _connections = new();
    private readonly Queue<WaitforTiming> _timings = new();
    private Socket? _listener;
    private Thread? _acceptThread;
    private int _port;
    private int _connectionCounter;
    private long _attentionCount;
    private long _waitforsRunning;

    /// <summary>The loopback port, fixed at the first start and kept across restarts so connection strings stay valid.</summary>
    public int Port
    {
        get
        {
            lock (_gate)
            {
                return _port != 0 ? _port : throw new InvalidOperationException("The embedded TDS responder has not been started.");
            }
        }
    }

    public bool IsRunning
    {
        get
        {
            lock (_gate)
            {
                return _listener is not null;
            }
        }
    }

    /// <summary>Attentions acknowledged so far: each is a command timeout or a cancellation the client sent.</summary>
    public long AttentionCount => Interlocked.Read(ref _attentionCount);

    /// <summary>WAITFORs received and not yet answered: a client that goes away now leaves one running here.</summary>
    public long WaitforsRunning => Interlocked.Read(ref _waitforsRunning);

    /// <summary>Open connections right now.</summary>
    public int ConnectionCount => _connections.Count;

    /// <summary>Starts listening: on a free port the first time, then on the same port again.</summary>
    public void Start()
    {
        lock (_gate)
        {
            if (_listener is not null)
            {
                return;
            }

            var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            listener.Bind(new IPEndPoint(IPAddress.Loopback, _port));
            listener.Listen(MaxConnections);
            _port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            _listener = listener;
            _acceptThread = new Thread(() => AcceptLoop(listener)) { IsBackground = true, Name = "tds-accept" };
            _acceptThread.Start();
            LogStarted(logger, _port);
        }
    }

    /// <summary>Stops listening and drops every connection, as a database server that goes down does.</summary>
    public void Stop()
    {
        Thread? acceptThread;
        lock (_gate)
        {
            if (_listener is null)
            {
                return;
            }

            _listener.Dispose();
            _listener = null;
            acceptThread = _acceptThread;
            _acceptThread = null;
        }

        foreach (var connection in _connections.Keys)
        {
            CloseQuietly(connection);
        }

        acceptThread?.Join(TimeSpan.FromSeconds(5));
        LogStopped(logger, _port);
    }

    /// <summary>Each WAITFOR answered so far (the latest 10,000): when it was due and when its DONE was sent.</summary>
    public IReadOnlyList<WaitforTiming> WaitforTimings()
    {
        lock (_timings)
        {
            return [.. _timings];
        }
    }

    public void Dispose() => Stop();

    internal void RecordAttention() => Interlocked.Increment(ref _attentionCount);

    internal void WaitforStarted() => Interlocked.Increment(ref _waitforsRunning);

    internal void WaitforEnded() => Interlocked.Decrement(ref _waitforsRunning);

    internal void Record(WaitforTiming timing)
    {
        metrics?.RecordWaitforLateness(timing.Lateness);
        lock (_timings)
        {
            if (_timings.Count == TimingCapacity)
            {
                _timings.Dequeue();
            }

            _timings.Enqueue(timing);
        }
    }

    private void AcceptLoop(Socket listener)
    {
        while (true)
        {
            Socket client;
            try
            {
                client = listener.Accept();
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                return; // Stop() closed the listener.
            }

            if (_connections.Count >= MaxConnections)
            {
                LogRefused(logger, MaxConnections);
                CloseQuietly(client);
                continue;
            }

            client.NoDelay = true;
            _connections[client] = 0;
            var id = Interlocked.Increment(ref _connectionCounter);

            // A dedicated thread per connection: blocking reads and the WAITFOR wait never touch the app's pool.
            var thread = new Thread(() => Serve(client), maxStackSize: 256 * 1024)
            {
                IsBackground = true,
                Name = $"tds-connection-{id}",
            };
            thread.Start();
        }
    }

    private void Serve(Socket client)
    {
        try
        {
            new TdsSession(client, this).Run();
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or EndOfStreamException or InvalidDataException)
        {
            LogConnectionEnded(logger, e.Message);
        }
#pragma warning disable CA1031 // a connection's own thread: anything it did not expect ends the connection, logged, never the app
        catch (Exception e)
#pragma warning restore CA1031
        {
            LogConnectionFailed(logger, e, e.GetType().Name);
        }
        finally
        {
            _connections.TryRemove(client, out _);
            CloseQuietly(client);
        }
    }

    private static void CloseQuietly(Socket socket)
    {
        try
        {
            socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Already closed by the peer: nothing left to shut down.
        }

        socket.Dispose();
    }

    [LoggerMessage(EventId = 5511, Level = LogLevel.Information, Message = "Embedded TDS responder listening on 127.0.0.1:{Port}")]
    private static partial void LogStarted(ILogger logger, int port);

    [LoggerMessage(EventId = 5512, Level = LogLevel.Information, Message = "Embedded TDS responder on port {Port} stopped; connections dropped")]
    private static partial void LogStopped(ILogger logger, int port);

    [LoggerMessage(EventId = 5513, Level = LogLevel.Warning, Message = "Embedded TDS responder refused a connection: {Max} are open already")]
    private static partial void LogRefused(ILogger logger, int max);

    [LoggerMessage(EventId = 5514, Level = LogLevel.Debug, Message = "Embedded TDS connection ended: {Reason}")]
    private static partial void LogConnectionEnded(ILogger logger, string reason);

    [LoggerMessage(EventId = 5517, Level = LogLevel.Error, Message = "Embedded TDS connection failed on an unexpected {ExceptionType}; the responder serves on")]
    private static partial void LogConnectionFailed(ILogger logger, Exception exception, string exceptionType);
}

/// <summary>One answered WAITFOR, in <see cref="Stopwatch"/> time: due = batch received + delay; sent = DONE written.</summary>
public readonly record struct WaitforTiming(TimeSpan Delay, long DueTimestamp, long SentTimestamp)
{
    /// <summary>How late the DONE went out; on a responder that does not share the starved pool this stays near zero.</summary>
    public TimeSpan Lateness => Stopwatch.GetElapsedTime(DueTimestamp, SentTimestamp);
}
