using Microsoft.Diagnostics.Tracing.Etlx;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>A <c>.nettrace</c> converted to TraceEvent's indexed form (etlx) in a temporary file that goes away with it.</summary>
internal sealed class TraceLogFiles : IDisposable
{
    private readonly string _etlxPath;

    private TraceLogFiles(TraceLog traceLog, string etlxPath)
    {
        TraceLog = traceLog;
        _etlxPath = etlxPath;
    }

    public TraceLog TraceLog { get; }

    /// <summary>Whether the file is a trace rather than, say, a dump: named <c>.nettrace</c>, or starting with the format's magic.</summary>
    public static bool IsNettrace(string path)
    {
        if (path.EndsWith(".nettrace", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        try
        {
            using var file = File.OpenRead(path);
            Span<byte> magic = stackalloc byte[8];
            return file.ReadAtLeast(magic, magic.Length, throwOnEndOfStream: false) == magic.Length && magic.SequenceEqual("Nettrace"u8);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    public static TraceLogFiles Open(string nettracePath)
    {
        if (!File.Exists(nettracePath))
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableTrace, $"No file at {nettracePath}: pass the path of a .nettrace file.");
        }

        var etlx = ScratchFiles.NewPath(Path.GetFileNameWithoutExtension(nettracePath), ".etlx");
        try
        {
            TraceLog.CreateFromEventPipeDataFile(nettracePath, etlx);
            return new TraceLogFiles(new TraceLog(etlx), etlx);
        }
        catch (Exception e) when (e is not DiagnosisException and not OutOfMemoryException)
        {
            File.Delete(etlx);
            throw new DiagnosisException(DiagnosisFailure.UnreadableTrace,
                $"{nettracePath} is not a readable .nettrace ({e.GetType().Name}: {e.Message.Split('\n', 2)[0].Trim()}): record it with dotnet-trace collect, or again if it was cut short.", e);
        }
    }

    public void Dispose()
    {
        TraceLog.Dispose();
        File.Delete(_etlxPath);
    }
}
