using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace DiagnosticScenarios.OffPool;

/// <summary>
/// One connection of an <see cref="OffPoolListener"/>, on its own thread: reads bounded by the deadline of what it waits
/// for (a first byte, the rest of a request, the next request), and the state the listener sheds by.
/// </summary>
public sealed class OffPoolConnection
{
    private const int TimeoutStep = 100;

    private readonly OffPoolListener _listener;
    private long _deadline;
    private int _receiveTimeout;
    private bool _served;

    internal OffPoolConnection(Socket socket, OffPoolListener listener)
    {
        Socket = socket;
        _listener = listener;
        Limits = listener.Limits;
        RemoteAddress = (socket.RemoteEndPoint as IPEndPoint)?.Address;
        EnteredState = Stopwatch.GetTimestamp();
        _deadline = EnteredState + Ticks(Limits.FirstByteTimeout);
    }

    public Socket Socket { get; }

    public IPAddress? RemoteAddress { get; }

    public OffPoolLimits Limits { get; }

    /// <summary>Set when the listener took this connection's slot for another: a stream ends at its next event, then the connection.</summary>
    public bool IsShed => Volatile.Read(ref _shed);

    // Guarded by the listener's lock.
    internal ConnectionState State { get; set; } = ConnectionState.Idle;

    internal bool Sheddable { get; set; } = true;

    internal long EnteredState { get; set; }

    internal bool HoldsSlot { get; set; } = true;

    internal bool IsLong => State is ConnectionState.Stream or ConnectionState.Held;

    private bool _shed;

    internal void MarkShed() => Volatile.Write(ref _shed, true);

    /// <summary>
    /// Waits for the next request: the first byte within the first-byte deadline on a new connection, else the idle
    /// timeout. <paramref name="sheddable"/>: whether the listener may close it while it waits, for a new connection.
    /// </summary>
    public void AwaitRequest(bool sheddable = true)
    {
        _listener.Enter(this, ConnectionState.Idle, sheddable);
        if (_served)
        {
            _deadline = Stopwatch.GetTimestamp() + Ticks(Limits.IdleTimeout);
        }

        // The first request's deadline counts from accept, set when the connection was.
        _served = true;
    }

    /// <summary>A request has begun (its first byte is in): the rest of it must come within the request timeout.</summary>
    /// <returns>False when the listener shed the connection first.</returns>
    public bool BeginRequest()
    {
        if (!_listener.Enter(this, ConnectionState.Busy, sheddable: false))
        {
            return false;
        }

        _deadline = Stopwatch.GetTimestamp() + Ticks(Limits.RequestTimeout);
        return true;
    }

    /// <summary>
    /// Turns this request into a long exchange, within <see cref="OffPoolLimits.MaxStreams"/>: a stream (which a later
    /// one may shed) or a request held for a while (which none may).
    /// </summary>
    /// <returns>False when no room can be made: answer 503.</returns>
    public bool BeginLong(bool sheddable) => _listener.EnterLong(this, sheddable);

    /// <summary>
    /// Receives what has arrived, waiting no longer than the deadline of what the connection waits for.
    /// </summary>
    /// <returns>0 when the client closed the connection, or when it was waiting between requests and the wait ran out or it was shed.</returns>
    /// <exception cref="TimeoutException">A request begun did not arrive whole in time.</exception>
    public int Receive(Span<byte> buffer)
    {
        var idle = State == ConnectionState.Idle;
        var left = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), _deadline);
        if (left <= TimeSpan.Zero)
        {
            return idle ? 0 : throw Late();
        }

        // In steps of a tenth of a second, set only when the step changes: a kept-alive connection's reads then cost no
        // system call for it, and a deadline is kept to within the step.
        var timeout = (int)Math.Min(int.MaxValue, Math.Ceiling(left.TotalMilliseconds / TimeoutStep) * TimeoutStep);
        if (timeout != _receiveTimeout)
        {
            Socket.ReceiveTimeout = _receiveTimeout = timeout;
        }

        int read;
        try
        {
            read = Socket.Receive(buffer);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.TimedOut)
        {
            return idle ? 0 : throw Late();
        }
        catch (Exception e) when (idle && e is SocketException or ObjectDisposedException)
        {
            // Shed, or reset by the client between requests: an end like any other.
            return 0;
        }

        return read > 0 && idle && !BeginRequest() ? 0 : read;
    }

    /// <summary>Whether the client has closed its side: nothing more to read and the socket at its end.</summary>
    public bool ClientHasGone()
    {
        try
        {
            return Socket.Poll(0, SelectMode.SelectRead) && Socket.Available == 0;
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            return true;
        }
    }

    private TimeoutException Late() =>
        new($"The request did not arrive whole within {Limits.RequestTimeout.TotalSeconds:0.#} s of its first byte.");

    private static long Ticks(TimeSpan span) => (long)(span.TotalSeconds * Stopwatch.Frequency);
}

internal enum ConnectionState
{
    /// <summary>Waiting for a request's first byte (a new connection, or kept alive between two).</summary>
    Idle,

    /// <summary>Reading a request or answering a short one.</summary>
    Busy,

    /// <summary>A long exchange a newer one may end (an event stream).</summary>
    Stream,

    /// <summary>A long exchange none may end (a capture being taken).</summary>
    Held,
}
