using System.Diagnostics;
using System.Net.Sockets;
using DiagnosticScenarios.Common;
using Microsoft.Diagnostics.NETCore.Client;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>Finds the .NET process to diagnose, and says plainly why one cannot be.</summary>
public static class TargetProcess
{
    /// <summary>
    /// The id of the one process with this name (as <c>dotnet-trace -n</c> matches it), or of the one .NET app started as
    /// <c>dotnet NAME.dll</c>, whose process is named <c>dotnet</c> (Linux, from its command line): the published folder's
    /// <c>dotnet publish/DiagnosticScenarios.dll</c>, which <c>dotnet-trace -n</c> does not find.
    /// </summary>
    public static int FindByName(string name)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        var matches = Process.GetProcessesByName(name);
        try
        {
            var ids = matches.Select(p => p.Id).Union(StartedThroughDotnet(name)).Order().ToList();
            return ids.Count switch
            {
                0 => throw new DiagnosisException(DiagnosisFailure.ProcessNotFound,
                    $"No process is named '{name}' or runs {name}.dll: start the app, or pass its id with -p."),
                1 => ids[0],
                _ => throw new DiagnosisException(DiagnosisFailure.AmbiguousName,
                    $"{ids.Count} processes are named '{name}' or run {name}.dll ({string.Join(", ", ids)}): pass the one you mean with -p."),
            };
        }
        finally
        {
            foreach (var process in matches)
            {
                process.Dispose();
            }
        }
    }

    // The .NET processes (a diagnostic port published) whose command line is the dotnet host running NAME.dll.
    internal static List<int> StartedThroughDotnet(string name) =>
        OperatingSystem.IsLinux() ? DiagnosticsClient.GetPublishedProcesses().Where(id => EntryAssemblyName(id) == name).ToList() : [];

    /// <summary>The file name, without <c>.dll</c>, of the assembly the dotnet host runs in this process; null for any other process.</summary>
    internal static string? EntryAssemblyName(int processId)
    {
        string[] arguments;
        try
        {
            arguments = File.ReadAllText($"/proc/{processId}/cmdline").Split('\0', StringSplitOptions.RemoveEmptyEntries);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        return EntryAssemblyName(arguments);
    }

    /// <summary>From a command line: <c>dotnet [exec] [host options] APP.dll [arguments]</c> → APP.</summary>
    internal static string? EntryAssemblyName(IReadOnlyList<string> arguments)
    {
        if (arguments.Count < 2 || !DotnetHost.IsHost(arguments[0]))
        {
            return null;
        }

        var entry = arguments.Skip(1).FirstOrDefault(a => a.EndsWith(".dll", StringComparison.OrdinalIgnoreCase));
        return entry is null ? null : Path.GetFileNameWithoutExtension(entry);
    }

    /// <summary>Throws a <see cref="DiagnosisException"/> unless <paramref name="processId"/> runs and publishes a .NET diagnostic port.</summary>
    public static void EnsureDiagnosable(int processId)
    {
        var name = NameOf(processId) ?? throw new DiagnosisException(DiagnosisFailure.ProcessNotFound,
            $"No process has id {processId}: check the id (ps, or dotnet-trace ps), or pass the app's name with -n.");
        if (!DiagnosticsClient.GetPublishedProcesses().Contains(processId))
        {
            throw new DiagnosisException(DiagnosisFailure.NotDotNet, NoPort(processId, name, ""));
        }
    }

    /// <summary>
    /// Why a session could not be opened. A refused connection means nothing listens on the socket named after the id: a
    /// process of that id that ended without removing it (killed, say) left it, and this one, which reused the id, is not
    /// .NET or has no port; the runtime of a running .NET app always listens on its own.
    /// </summary>
    internal static DiagnosisException Unreachable(int processId, Exception cause) =>
        IsRefused(cause)
            ? new(DiagnosisFailure.NotDotNet,
                NoPort(processId, NameOf(processId) ?? "no longer running", " (its id's socket file was left by an earlier process of that id: nothing listens on it)"), cause)
            : new(DiagnosisFailure.PortUnreachable,
                $"The diagnostic port of process {processId} did not answer ({cause.GetType().Name}: {FirstLine(cause.Message)}): run as the same user as the app, and check that it is still running.",
                cause);

    private static string NoPort(int processId, string name, string why) =>
        $"Process {processId} ({name}) publishes no .NET diagnostic port{why}: it is not a .NET app, runs with DOTNET_EnableDiagnostics=0, or uses another TMPDIR; point at a .NET app started normally.";

    private static bool IsRefused(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is SocketException { SocketErrorCode: SocketError.ConnectionRefused })
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Whether the process has ended, or does within <paramref name="grace"/>: no process has the id any more, or (Linux) only
    /// its zombie is left for its parent to reap. A killed process closes its diagnostic socket a moment before it is a zombie.
    /// </summary>
    internal static bool EndsWithin(int processId, TimeSpan grace)
    {
        var waited = Stopwatch.StartNew();
        while (!HasEnded(processId))
        {
            if (waited.Elapsed >= grace)
            {
                return false;
            }

            Thread.Sleep(TimeSpan.FromMilliseconds(50));
        }

        return true;
    }

    private static bool HasEnded(int processId)
    {
        if (!OperatingSystem.IsLinux())
        {
            return NameOf(processId) is null;
        }

        try
        {
            // "pid (comm) state ...": the state follows the last ')', since the name may hold one.
            var stat = File.ReadAllText($"/proc/{processId}/stat");
            return stat[stat.LastIndexOf(')') + 2] is 'Z' or 'X';
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // No such process (any more).
            return true;
        }
    }

    // The process's name, or null when no process has the id (any more).
    private static string? NameOf(int processId)
    {
        try
        {
            using var process = Process.GetProcessById(processId);
            return process.ProcessName;
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException)
        {
            return null;
        }
    }

    /// <summary>The first line of an exception's message, for an error of one line.</summary>
    internal static string FirstLine(string text) => text.Split('\n', 2)[0].Trim();
}
