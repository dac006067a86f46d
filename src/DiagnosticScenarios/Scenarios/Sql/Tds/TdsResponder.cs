using System.Net.Sockets;
using DiagnosticScenarios.OffPool;

namespace DiagnosticScenarios.Scenarios.Sql.Tds;

/// <summary>
/// A minimal SQL Server stand-in on 127.0.0.1 that Microsoft.Data.SqlClient talks to over real TCP:
/// it logs anyone in and answers <c>WAITFOR DELAY</c> after the delay.
/// </summary>
/// <remarks>
/// It runs on threads of its own (<see cref="OffPoolListener"/>: an accept thread, a thread per session, blocking socket
/// I/O) and never on the app's thread pool: the scenarios starve that pool on purpose, and a database that answered late
/// because of it would distort the very thing being measured.
/// </remarks>
/// <param name="logger">Where it says it started, stopped, and refused or ended a session.</param>
/// <param name="limits">Its sessions and deadlines; <see cref="OffPoolOptions.Tds"/>'s when none are given.</param>
/// <param name="answered">Told of each WAITFOR answered (the app's metrics record its lateness); called on the session's thread.</param>
public sealed partial class TdsResponder(ILogger<TdsResponder> logger, OffPoolLimits? limits = null, Action<WaitforTiming>? answered = null) : IDisposable
{
    private readonly Lock _gate = new();
    private readonly TdsCounters _counters = new(answered);
    private OffPoolListener? _listener;
    private int _port;

    public OffPoolLimits Limits { get; } = limits ?? new OffPoolOptions().Tds;

    /// <summary>Starts a session's thread (<see cref="OffPoolListener.StartThread"/>); a test puts one that fails here.</summary>
    internal Action<Thread>? StartThread { get; set; }

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
    public long AttentionCount => _counters.Attentions;

    /// <summary>WAITFORs received and not yet answered: a client that goes away now leaves one running here.</summary>
    public long WaitforsRunning => _counters.WaitforsRunning;

    /// <summary>Open sessions right now.</summary>
    public int ConnectionCount
    {
        get
        {
            lock (_gate)
            {
                return _listener?.Connections ?? 0;
            }
        }
    }

    /// <summary>Starts listening: on a free port the first time, then on the same port again.</summary>
    public void Start()
    {
        lock (_gate)
        {
            if (_listener is not null)
            {
                return;
            }

            var listener = new OffPoolListener("tds", Limits, Serve, refuse: _ => { }, logger);
            if (StartThread is { } startThread)
            {
                listener.StartThread = startThread;
            }

            listener.Start(_port, alsoIPv6: false);
            _port = listener.Port;
            _listener = listener;
            LogStarted(logger, _port);
        }
    }

    /// <summary>Stops listening and drops every session, as a database server that goes down does.</summary>
    public void Stop()
    {
        lock (_gate)
        {
            if (_listener is null)
            {
                return;
            }

            _listener.Dispose();
            _listener = null;
        }

        LogStopped(logger, _port);
    }

    /// <summary>Each WAITFOR answered so far (the latest 10,000): when it was due and when its DONE was sent.</summary>
    public IReadOnlyList<WaitforTiming> WaitforTimings() => _counters.Timings();

    public void Dispose() => Stop();

    private void Serve(OffPoolConnection connection)
    {
        // A client that stops reading its answers (each a few hundred bytes) is gone.
        connection.Socket.SendTimeout = (int)Limits.RequestTimeout.TotalMilliseconds;
        try
        {
            new TdsSession(connection, _counters).Run();
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or EndOfStreamException or InvalidDataException or TimeoutException)
        {
            LogConnectionEnded(logger, e.Message);
        }
    }

    [LoggerMessage(EventId = 5511, Level = LogLevel.Information, Message = "Embedded TDS responder listening on 127.0.0.1:{Port}")]
    private static partial void LogStarted(ILogger logger, int port);

    [LoggerMessage(EventId = 5512, Level = LogLevel.Information, Message = "Embedded TDS responder on port {Port} stopped; connections dropped")]
    private static partial void LogStopped(ILogger logger, int port);

    [LoggerMessage(EventId = 5514, Level = LogLevel.Debug, Message = "Embedded TDS connection ended: {Reason}")]
    private static partial void LogConnectionEnded(ILogger logger, string reason);
}
