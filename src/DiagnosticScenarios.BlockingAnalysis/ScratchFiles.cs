using System.Diagnostics;
using System.Globalization;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Where the diagnosis writes the traces it reads once and deletes (a stack capture's few megabytes, its indexed copy): a
/// folder of this process's own under the temporary folder. A process killed mid-capture cannot delete its files, and the
/// load runner and the tests kill starved servers whose own capture is running; so the first capture of each process
/// deletes the folders of processes that are gone, and nothing piles up.
/// </summary>
public static class ScratchFiles
{
    private const string Prefix = "diagnosticscenarios-traces-";

    private static readonly Lazy<string> Folder = new(CreateFolder, LazyThreadSafetyMode.ExecutionAndPublication);

    /// <summary>A new path in this process's folder: <paramref name="name"/>, a unique suffix and <paramref name="extension"/>.</summary>
    internal static string NewPath(string name, string extension) =>
        Path.Combine(Folder.Value, $"{name}-{Guid.NewGuid():N}{extension}");

    /// <summary>How the name of a folder of process <paramref name="processId"/> starts; a random suffix follows.</summary>
    public static string FolderPrefixOf(int processId) =>
        Prefix + processId.ToString(CultureInfo.InvariantCulture) + "-";

    private static string CreateFolder()
    {
        foreach (var stale in Directory.EnumerateDirectories(Path.GetTempPath(), Prefix + "*"))
        {
            // This process's id on a folder is a dead process's whose id came round again: this one has none yet.
            var name = Path.GetFileName(stale.AsSpan())[Prefix.Length..];
            var dash = name.IndexOf('-');
            if (dash < 0 || !int.TryParse(name[..dash], NumberStyles.None, CultureInfo.InvariantCulture, out var owner)
                || (owner != Environment.ProcessId && IsRunning(owner)))
            {
                continue;
            }

            TryDelete(stale);
        }

        // A new folder of a random name, readable by this user alone (on Unix), which no other user can have made first.
        var folder = Directory.CreateTempSubdirectory(FolderPrefixOf(Environment.ProcessId)).FullName;

        // A process that ends as processes should (its work done, or stopped by a signal it handles) leaves nothing either.
        AppDomain.CurrentDomain.ProcessExit += (_, _) => TryDelete(folder);
        return folder;
    }

    private static void TryDelete(string folder)
    {
        try
        {
            Directory.Delete(folder, recursive: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Another user's, or being deleted by another process at the same moment.
        }
    }

    private static bool IsRunning(int processId)
    {
        try
        {
            using var process = Process.GetProcessById(processId);
            return !process.HasExited;
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException)
        {
            return false;
        }
    }
}
