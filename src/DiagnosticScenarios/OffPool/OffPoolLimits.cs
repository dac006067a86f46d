using System.ComponentModel.DataAnnotations;

namespace DiagnosticScenarios.OffPool;

/// <summary>How much one server on the app's own threads takes on (<see cref="OffPoolListener"/>): its slots and deadlines.</summary>
public sealed class OffPoolLimits
{
    /// <summary>Connections served at once, a thread each. When all are taken a new one sheds an idle connection, then the oldest stream; else it is refused.</summary>
    [Range(1, 4096)]
    public int MaxConnections { get; set; } = 64;

    /// <summary>
    /// Of <see cref="MaxConnections"/>, how many may hold a long exchange (an event stream, a capture) at once; the rest stay
    /// for short requests. A stream beyond it ends the oldest stream, which its reader resumes.
    /// </summary>
    [Range(0, 4096)]
    public int MaxStreams { get; set; } = 16;

    /// <summary>How long a new connection may take to send its first byte.</summary>
    public TimeSpan FirstByteTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long a request (an HTTP head and body, a TDS message) may take to arrive whole once its first byte has.</summary>
    public TimeSpan RequestTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long a connection may sit idle between two requests before it is closed.</summary>
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Short requests always have this many slots at least.</summary>
    public int ReservedForShortRequests => MaxConnections - MaxStreams;

    /// <summary>Why these limits cannot work, or null.</summary>
    public string? Problem(string name) =>
        MaxStreams >= MaxConnections ? $"{name}: MaxStreams ({MaxStreams}) must be below MaxConnections ({MaxConnections}), so short requests keep slots of their own."
        : FirstByteTimeout <= TimeSpan.Zero || RequestTimeout <= TimeSpan.Zero || IdleTimeout <= TimeSpan.Zero ? $"{name}: every timeout must be above zero."
        : null;
}
