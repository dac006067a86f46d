using Microsoft.Diagnostics.NETCore.Client;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// A dump of a .NET process written at a moment that matters, as dotnet-monitor's CollectDump action writes one: through
/// the process's diagnostic port (<c>DiagnosticsClient.WriteDump</c>), the runtime's createdump doing the work. The dump
/// is what <see cref="DumpSnapshots.Analyze"/> reads back.
/// </summary>
public static class ProcessDumps
{
    /// <summary>The kinds of dump, as dotnet-dump collect names them: <c>heap</c> (the default), <c>full</c>, <c>mini</c>, <c>triage</c>.</summary>
    public static IReadOnlyDictionary<string, DumpType> Types { get; } = new Dictionary<string, DumpType>(StringComparer.OrdinalIgnoreCase)
    {
        ["heap"] = DumpType.WithHeap,
        ["full"] = DumpType.Full,
        ["mini"] = DumpType.Normal,
        ["triage"] = DumpType.Triage,
    };

    /// <summary>
    /// Writes a dump of <paramref name="target"/> into <paramref name="directory"/> (created if missing) and returns its path.
    /// The target's runtime writes it: behind a diagnostic port, the folder must be one the app sees at the same path.
    /// </summary>
    /// <exception cref="DiagnosisException">The folder cannot be created, or the runtime could not write the dump (its port did not answer, createdump failed).</exception>
    public static string Write(DiagnosticTarget target, string directory, DumpType type = DumpType.WithHeap)
    {
        string path;
        try
        {
            Directory.CreateDirectory(directory);
            path = Path.Combine(Path.GetFullPath(directory), $"dump-{target.FileNamePart}-{DateTime.UtcNow:yyyyMMdd-HHmmss-fff}.core");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new DiagnosisException(DiagnosisFailure.DumpNotWritten, $"The dump's folder {directory} could not be created: {e.Message}", e);
        }

        try
        {
            target.Client().WriteDump(type, path, logDumpGeneration: false);
        }
        catch (Exception e) when (e is ServerErrorException or ServerNotAvailableException or UnsupportedCommandException or TimeoutException or IOException)
        {
            throw new DiagnosisException(DiagnosisFailure.DumpNotWritten, $"The runtime of {target.Name} could not write a dump to {path}: {e.Message.Split('\n', 2)[0].Trim()}", e);
        }

        return path;
    }
}
