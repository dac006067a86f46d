using System.Globalization;

namespace DiagnosticScenarios.Common;

/// <summary>
/// The diagnostic port's socket files of .NET processes killed outright. A .NET process on Linux or macOS listens on
/// <c>dotnet-diagnostic-{pid}-{key}-socket</c> in the temporary folder and deletes it as it exits, but a killed one
/// cannot: left behind, one file a server, they pile up in <c>/tmp</c> and name a process that is gone, or the process
/// that gets its id next.
/// </summary>
public static class DiagnosticSockets
{
    /// <summary>
    /// <paramref name="processId"/> and, on Linux, every process it started, their children and so on: what
    /// <see cref="System.Diagnostics.Process.Kill(bool)"/> with the whole tree is about to kill.
    /// </summary>
    public static IReadOnlyList<int> Tree(int processId)
    {
        var tree = new List<int> { processId };
        if (!OperatingSystem.IsLinux())
        {
            return tree;
        }

        var parents = new Dictionary<int, int>();
        foreach (var folder in Directory.EnumerateDirectories("/proc"))
        {
            if (int.TryParse(Path.GetFileName(folder), NumberStyles.None, CultureInfo.InvariantCulture, out var id) && ParentOf(folder) is { } parent)
            {
                parents[id] = parent;
            }
        }

        for (var i = 0; i < tree.Count; i++)
        {
            tree.AddRange(parents.Where(p => p.Value == tree[i]).Select(p => p.Key));
        }

        return tree;
    }

    /// <summary>Deletes the socket files of <paramref name="processIds"/>, which must have been killed: a live process's file is its port.</summary>
    /// <returns>How many it deleted.</returns>
    public static int DeleteOfKilled(IEnumerable<int> processIds)
    {
        ArgumentNullException.ThrowIfNull(processIds);
        if (OperatingSystem.IsWindows())
        {
            return 0; // A named pipe, which goes with its process.
        }

        var deleted = 0;
        foreach (var id in processIds)
        {
            foreach (var file in Directory.EnumerateFiles(Path.GetTempPath(), string.Create(CultureInfo.InvariantCulture, $"dotnet-diagnostic-{id}-*-socket")))
            {
                try
                {
                    File.Delete(file);
                    deleted++;
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    // Another user's, or gone already.
                }
            }
        }

        return deleted;
    }

    // /proc/{pid}/stat: "pid (comm) state ppid …", the command name in parentheses and free to contain either.
    private static int? ParentOf(string folder)
    {
        try
        {
            var stat = File.ReadAllText(Path.Combine(folder, "stat"));
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ', 3);
            return int.Parse(fields[1], NumberStyles.None, CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or ArgumentOutOfRangeException or IndexOutOfRangeException)
        {
            return null; // Gone since the folder was listed.
        }
    }
}
