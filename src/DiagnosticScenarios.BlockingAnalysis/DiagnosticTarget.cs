using System.Globalization;
using System.Net.Sockets;
using Microsoft.Diagnostics.NETCore.Client;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The process a session diagnoses: one this machine sees by its id, whose runtime listens on its own diagnostic port; or
/// the runtime that connected to a port this tool listens on (<see cref="Listen"/>), as a sidecar that shares only a
/// folder with the app reaches it.
/// </summary>
public sealed class DiagnosticTarget : IDisposable
{
    private readonly DiagnosticsClientConnector? _connector;

    private DiagnosticTarget(int? processId, string? port, DiagnosticsClientConnector? connector)
    {
        ProcessId = processId;
        Port = port;
        _connector = connector;
    }

    /// <summary>The process's id: given, or, for a runtime connected to a port, read from its first session's events; null until then.</summary>
    public int? ProcessId { get; private set; }

    /// <summary>The socket this tool listens on and the runtime connected to; null for a process reached by its id.</summary>
    public string? Port { get; }

    /// <summary>What a scratch file of its sessions is named after: its id, or "port" while the id is not known.</summary>
    internal string FileNamePart => ProcessId?.ToString(CultureInfo.InvariantCulture) ?? "port";

    /// <summary>The process as a one-line error names it: "process 1234", or "the process connected to /diag/port.sock".</summary>
    public string Name => Port is null
        ? string.Create(CultureInfo.InvariantCulture, $"process {ProcessId}")
        : $"the process connected to {Port}{(ProcessId is { } id ? string.Create(CultureInfo.InvariantCulture, $" (process {id})") : "")}";

    /// <summary>The process of this id.</summary>
    public static DiagnosticTarget FromProcessId(int processId) => new(processId, null, null);

#pragma warning disable CA2225 // FromProcessId is the named alternative
    public static implicit operator DiagnosticTarget(int processId) => FromProcessId(processId);
#pragma warning restore CA2225

    /// <summary>
    /// Creates the Unix socket <paramref name="path"/> and waits, at most <paramref name="patience"/>, for a runtime started
    /// with <c>DOTNET_DiagnosticPorts=PATH,nosuspend</c> to connect to it (the listen mode of dotnet-trace's
    /// <c>--diagnostic-port</c> and of dotnet-monitor). The runtime connects again after each command, to the same socket,
    /// so the target serves every session of one run; disposing it removes the socket.
    /// </summary>
    /// <exception cref="DiagnosisException">No runtime connected within <paramref name="patience"/>, or the socket could not be created.</exception>
    public static DiagnosticTarget Listen(string path, TimeSpan patience)
    {
        var fullPath = Path.GetFullPath(path);
        DeleteIfStale(fullPath);
        using var waiting = new CancellationTokenSource(patience);
        DiagnosticsClientConnector? connector;
        try
        {
            // On a thread of its own: the connector's accept is asynchronous, and this caller may be a starved process's.
#pragma warning disable VSTHRD002 // deliberate: the accept ends with the token above, and the caller is synchronous
            connector = EventPipeRecorder.OnDedicatedThread(
                () => DiagnosticsClientConnector.FromDiagnosticPort($"{fullPath},listen", waiting.Token).GetAwaiter().GetResult(), "Diagnostic port listener")
                .GetAwaiter().GetResult();
#pragma warning restore VSTHRD002
        }
        catch (OperationCanceledException)
        {
            connector = null;
        }
        catch (Exception e) when (e is IOException or SocketException or UnauthorizedAccessException or ArgumentException)
        {
            throw new DiagnosisException(DiagnosisFailure.PortUnreachable,
                $"Cannot listen on {fullPath} ({e.GetType().Name}: {TargetProcess.FirstLine(e.Message)}): give a path in a folder this user can write, where no other tool listens now.", e);
        }

        return connector is null
            ? throw new DiagnosisException(DiagnosisFailure.NoRuntimeConnected,
                $"No runtime connected to {fullPath} within {patience.TotalSeconds.ToString("0.#", CultureInfo.InvariantCulture)} s: start the app with DOTNET_DiagnosticPorts={fullPath},nosuspend, with that folder shared with this tool.")
            : new DiagnosticTarget(null, fullPath, connector);
    }

    // A socket file nothing listens on, left by a tool that was killed while it listened, would refuse the bind.
    private static void DeleteIfStale(string path)
    {
        if (!File.Exists(path) || (File.GetAttributes(path) & FileAttributes.Directory) != 0)
        {
            return;
        }

        using var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            probe.Connect(new UnixDomainSocketEndPoint(path));
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionRefused)
        {
            File.Delete(path);
        }
        catch (SocketException)
        {
            // Not a socket, or not this user's: the bind below says so.
        }
    }

    /// <summary>A client of the target's runtime; for a process by id, once it is known to run and publish its port.</summary>
    internal DiagnosticsClient Client()
    {
        if (_connector is not null)
        {
            return _connector.Instance;
        }

        TargetProcess.EnsureDiagnosable(ProcessId!.Value);
        return new DiagnosticsClient(ProcessId.Value);
    }

    /// <summary>Takes the id a session's events name, for a target connected to a port that did not know it.</summary>
    internal void Learn(int processId)
    {
        if (ProcessId is null && processId > 0)
        {
            ProcessId = processId;
        }
    }

    /// <summary>Why a session could not be opened or read, in one line.</summary>
    internal DiagnosisException Unreachable(Exception cause) =>
        Port is null
            ? TargetProcess.Unreachable(ProcessId!.Value, cause)
            : new(DiagnosisFailure.PortUnreachable,
                $"The runtime connected to {Port} did not answer ({cause.GetType().Name}: {TargetProcess.FirstLine(cause.Message)}): check that the app still runs; it connects again once restarted.",
                cause);

    /// <summary>Whether the process has ended, or does within <paramref name="grace"/>; a process behind a port ends its session's stream only as it exits.</summary>
    internal bool EndsWithin(TimeSpan grace) => Port is not null || TargetProcess.EndsWithin(ProcessId!.Value, grace);

    public void Dispose()
    {
        if (_connector is not null)
        {
#pragma warning disable VSTHRD002 // deliberate: closing the listening socket, which completes at once
            _connector.DisposeAsync().AsTask().GetAwaiter().GetResult();
#pragma warning restore VSTHRD002
        }
    }
}
