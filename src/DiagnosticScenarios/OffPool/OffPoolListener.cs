using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging.Abstractions;

namespace DiagnosticScenarios.OffPool;

/// <summary>
/// A loopback listener on threads of its own, never the thread pool: an accept thread per address and a thread per
/// connection, within <see cref="OffPoolLimits"/>. The one such loop of the app: the live page's server, the slow upstream
/// and the TDS responder all stand on it, since the pool they would otherwise use is the one the app starves.
/// </summary>
/// <remarks>
/// When every slot is taken, a new connection sheds the oldest idle one (a connection that has sent nothing yet, or sits
/// between requests), then the oldest stream; when neither is there it is refused. A thread that cannot start refuses
/// its connection alone, in one log line.
/// </remarks>
public sealed partial class OffPoolListener : IDisposable
{
    private const int ConnectionThreadStack = 256 * 1024;
    private static readonly TimeSpan RefusalLogInterval = TimeSpan.FromSeconds(10);

    private readonly string _name;
    private readonly Action<OffPoolConnection> _serve;
    private readonly Action<Socket> _refuse;
    private readonly ILogger _logger;
    private readonly List<Socket> _listeners = [];
    private readonly HashSet<OffPoolConnection> _live = [];
    private readonly Lock _lock = new();
    private int _slots;
    private int _long;
    private long _refusedSinceLog;
    private long _refusalLoggedAt;
    private volatile bool _stopping;

    /// <param name="name">Names its threads and log lines.</param>
    /// <param name="limits">Its slots and deadlines.</param>
    /// <param name="serve">Serves one connection on its own thread, until it returns; the connection is closed after.</param>
    /// <param name="refuse">Answers a connection it cannot serve (a 503, or nothing), briefly: it runs on the accept thread.</param>
    /// <param name="logger">Where a thread that did not start, a refusal and an unexpected failure are told.</param>
    public OffPoolListener(string name, OffPoolLimits limits, Action<OffPoolConnection> serve, Action<Socket> refuse, ILogger? logger = null)
    {
        if (limits.Problem(name) is { } problem)
        {
            throw new ArgumentException(problem, nameof(limits));
        }

        _name = name;
        Limits = limits;
        _serve = serve;
        _refuse = refuse;
        _logger = logger ?? NullLogger.Instance;
    }

    public OffPoolLimits Limits { get; }

    /// <summary>Starts a connection's thread; a test puts one that fails here, as a process at its thread limit does.</summary>
    internal Action<Thread> StartThread { get; set; } = thread => thread.Start();

    /// <summary>The port it listens on, once started.</summary>
    public int Port { get; private set; }

    /// <summary>Connections holding a slot now.</summary>
    public int Connections
    {
        get
        {
            lock (_lock)
            {
                return _slots;
            }
        }
    }

    /// <summary>Listens on 127.0.0.1 and, when asked and the machine has it, [::1], at <paramref name="port"/> (0 for a free one).</summary>
    /// <exception cref="SocketException">The port is taken.</exception>
    public void Start(int port, bool alsoIPv6 = true)
    {
        var first = Listen(IPAddress.Loopback, port);
        Port = ((IPEndPoint)first.LocalEndPoint!).Port;
        if (alsoIPv6 && Socket.OSSupportsIPv6)
        {
            try
            {
                Listen(IPAddress.IPv6Loopback, Port);
            }
            catch (SocketException)
            {
                // No IPv6 loopback here (a container without it): 127.0.0.1 serves localhost alone.
            }
        }
    }

    /// <summary>Stops listening and drops every connection.</summary>
    public void Dispose()
    {
        _stopping = true;
        List<Socket> sockets;
        lock (_lock)
        {
            sockets = [.. _listeners, .. _live.Select(c => c.Socket)];
            _listeners.Clear();
        }

        foreach (var socket in sockets)
        {
            Close(socket);
        }
    }

    internal bool Enter(OffPoolConnection connection, ConnectionState state, bool sheddable)
    {
        lock (_lock)
        {
            if (!connection.HoldsSlot)
            {
                return false;
            }

            _long -= connection.IsLong ? 1 : 0;
            if (connection.State != state)
            {
                connection.State = state;
                connection.EnteredState = Stopwatch.GetTimestamp();
            }

            connection.Sheddable = sheddable;
            return true;
        }
    }

    internal bool EnterLong(OffPoolConnection connection, bool sheddable)
    {
        lock (_lock)
        {
            if (!connection.HoldsSlot)
            {
                return false;
            }

            if (!connection.IsLong && _long >= Limits.MaxStreams)
            {
                if (Oldest(c => c != connection && c.State == ConnectionState.Stream) is not { } stream)
                {
                    return false;
                }

                Shed(stream);
            }

            _long += connection.IsLong ? 0 : 1;
            connection.State = sheddable ? ConnectionState.Stream : ConnectionState.Held;
            connection.EnteredState = Stopwatch.GetTimestamp();
            return true;
        }
    }

    private Socket Listen(IPAddress address, int port)
    {
        var listener = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            // A restart binds the same port again while the last one's connections linger in TIME_WAIT.
            listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            listener.Bind(new IPEndPoint(address, port));
            listener.Listen(Math.Max(128, Limits.MaxConnections));
        }
        catch
        {
            listener.Dispose();
            throw;
        }

        lock (_lock)
        {
            _listeners.Add(listener);
        }

        // The accept thread is started here, outside any connection: a failure is the caller's, at start-up.
        new Thread(() => Accept(listener)) { IsBackground = true, Name = $"{_name} accept" }.Start();
        return listener;
    }

    private void Accept(Socket listener)
    {
        while (!_stopping)
        {
            Socket socket;
            try
            {
                socket = listener.Accept();
                socket.NoDelay = true;
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                if (_stopping)
                {
                    return;
                }

                // A connection reset before it was accepted: the next one.
                continue;
            }

            var connection = new OffPoolConnection(socket, this);
            if (!Admit(connection))
            {
                Refuse(socket);
                continue;
            }

            var thread = new Thread(() => Serve(connection), ConnectionThreadStack) { IsBackground = true, Name = $"{_name} connection" };
            try
            {
                StartThread(thread);
            }
#pragma warning disable CA1031 // a thread refused by the system (OutOfMemoryException, ThreadStartException, a pids limit): that connection alone is refused
            catch (Exception e)
#pragma warning restore CA1031
            {
                Release(connection);
                LogThreadNotStarted(_logger, _name, e.GetType().Name, e.Message);
                Refuse(socket);
            }
        }
    }

    private void Serve(OffPoolConnection connection)
    {
        try
        {
            _serve(connection);
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or TimeoutException)
        {
            // The client went away, was too slow, or the connection was shed or the server is stopping.
        }
#pragma warning disable CA1031 // a connection's own thread: anything unexpected ends that connection, logged, never the app
        catch (Exception e)
#pragma warning restore CA1031
        {
            LogConnectionFailed(_logger, e, _name, e.GetType().Name);
        }
        finally
        {
            Release(connection);
            Close(connection.Socket);
        }
    }

    private bool Admit(OffPoolConnection connection)
    {
        lock (_lock)
        {
            if (_stopping)
            {
                return false;
            }

            if (_slots >= Limits.MaxConnections)
            {
                // A connection with bytes waiting is about to start a request: not idle.
                var victim = Oldest(c => c.State == ConnectionState.Idle && c.Sheddable && !HasBytesWaiting(c.Socket))
                    ?? Oldest(c => c.State == ConnectionState.Stream);
                if (victim is null)
                {
                    return false;
                }

                Shed(victim);
            }

            _slots++;
            _live.Add(connection);
            return true;
        }
    }

    private void Release(OffPoolConnection connection)
    {
        lock (_lock)
        {
            _live.Remove(connection);
            if (connection.HoldsSlot)
            {
                connection.HoldsSlot = false;
                _slots--;
                _long -= connection.IsLong ? 1 : 0;
            }
        }
    }

    // Under the lock. An idle connection is closed now (its thread's read ends); a stream ends itself at its next event.
    private void Shed(OffPoolConnection victim)
    {
        victim.HoldsSlot = false;
        victim.MarkShed();
        _slots--;
        _long -= victim.IsLong ? 1 : 0;
        if (victim.State == ConnectionState.Idle)
        {
            try
            {
                victim.Socket.Shutdown(SocketShutdown.Both);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                // Gone already.
            }
        }
    }

    private OffPoolConnection? Oldest(Func<OffPoolConnection, bool> match)
    {
        OffPoolConnection? oldest = null;
        foreach (var connection in _live)
        {
            if (connection.HoldsSlot && match(connection) && (oldest is null || connection.EnteredState < oldest.EnteredState))
            {
                oldest = connection;
            }
        }

        return oldest;
    }

    private void Refuse(Socket socket)
    {
        var refused = Interlocked.Increment(ref _refusedSinceLog);
        var now = Stopwatch.GetTimestamp();
        if (Stopwatch.GetElapsedTime(Interlocked.Read(ref _refusalLoggedAt), now) >= RefusalLogInterval)
        {
            Interlocked.Exchange(ref _refusalLoggedAt, now);
            Interlocked.Exchange(ref _refusedSinceLog, 0);
            LogRefused(_logger, _name, refused, Limits.MaxConnections);
        }

        try
        {
            _refuse(socket);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or IOException)
        {
            // Gone already.
        }
        finally
        {
            socket.Dispose();
        }
    }

    private static bool HasBytesWaiting(Socket socket)
    {
        try
        {
            return socket.Available > 0;
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            return false;
        }
    }

    private static void Close(Socket socket)
    {
        try
        {
            socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Closed by the peer, or a listener: nothing to shut down.
        }

        socket.Dispose();
    }

    [LoggerMessage(EventId = 5701, Level = LogLevel.Error, Message = "The {Server} server could not start a thread for a connection ({ExceptionType}: {Reason}); that connection was refused and its slot freed, and the server goes on")]
    private static partial void LogThreadNotStarted(ILogger logger, string server, string exceptionType, string reason);

    [LoggerMessage(EventId = 5702, Level = LogLevel.Warning, Message = "The {Server} server refused {Count} connection(s): all {Max} slots were busy with requests")]
    private static partial void LogRefused(ILogger logger, string server, long count, int max);

    [LoggerMessage(EventId = 5703, Level = LogLevel.Error, Message = "A connection of the {Server} server failed on an unexpected {ExceptionType}; that connection was closed and the server goes on")]
    private static partial void LogConnectionFailed(ILogger logger, Exception exception, string server, string exceptionType);
}
