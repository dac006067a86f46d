using System.Reflection.Metadata;
using System.Text;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The source files a PDB names, read from disk once each: the statement a sequence point spans, the code after it, and
/// whether the file is still the one the build compiled.
/// </summary>
internal sealed class SourceFiles
{
    private const int MaxTextLength = 100;

    private readonly Dictionary<string, string[]?> _files = new(StringComparer.Ordinal);
    private readonly Dictionary<string, bool> _matches = new(StringComparer.Ordinal);

    // The first line of code after a sequence point and before the next one's line: not blank, a comment or a brace.
    public (int Line, string Text)? StatementAfter(string file, SequencePoint point, SequencePoint? next)
    {
        if (Lines(file) is not { } lines)
        {
            return null;
        }

        var last = Math.Min(next is { } n && n.StartLine > point.EndLine ? n.StartLine - 1 : lines.Length, lines.Length);
        for (var line = point.EndLine + 1; line <= last; line++)
        {
            var content = lines[line - 1].Trim();
            // Comments, braces and preprocessor directives (a #pragma that suppresses a warning on the line below) are no code.
            if (content.Length > 0 && !content.StartsWith("//", StringComparison.Ordinal) && !content.StartsWith('#') && content is not ("{" or "}"))
            {
                return (line, content.Length <= MaxTextLength ? content : string.Concat(content.AsSpan(0, MaxTextLength - 1), "…"));
            }
        }

        return null;
    }

    // The checksum algorithms a PDB names a document's hash by.
    private static readonly Guid Sha1 = new("ff1816ec-aa5e-4d10-87f7-6f4963833460");
    private static readonly Guid Sha256 = new("8829d00f-11b8-4213-878b-770e8597ac16");

    // Whether the file on disk is the one the PDB was built from, by the checksum the compiler recorded for it; true when the
    // file is not there (the line says so) or the PDB records no checksum it knows.
    public bool MatchesTheBuild(MetadataReader reader, DocumentHandle handle, string file)
    {
        if (_matches.TryGetValue(file, out var matches))
        {
            return matches;
        }

        var document = reader.GetDocument(handle);
        var algorithm = document.HashAlgorithm.IsNil ? Guid.Empty : reader.GetGuid(document.HashAlgorithm);
        var recorded = document.Hash.IsNil ? [] : reader.GetBlobBytes(document.Hash);
        matches = true;
        if (recorded.Length > 0 && (algorithm == Sha1 || algorithm == Sha256) && File.Exists(file))
        {
            try
            {
                var bytes = File.ReadAllBytes(file);
#pragma warning disable CA5350 // a file's identity as an older compiler recorded it, not a security check
                matches = recorded.AsSpan().SequenceEqual(algorithm == Sha256 ? System.Security.Cryptography.SHA256.HashData(bytes) : System.Security.Cryptography.SHA1.HashData(bytes));
#pragma warning restore CA5350
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                matches = true;
            }
        }

        _matches[file] = matches;
        return matches;
    }

    private string[]? Lines(string file)
    {
        if (!_files.TryGetValue(file, out var lines))
        {
            try
            {
                lines = File.Exists(file) ? File.ReadAllLines(file) : null;
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Unreadable, as if missing: the frame keeps its file and line, without the text.
                lines = null;
            }

            _files[file] = lines;
        }

        return lines;
    }

    // The statement the sequence point spans, on one line: what a reader searches the file for.
    public string? Text(string file, SequencePoint point)
    {
        if (Lines(file) is not { } lines || point.StartLine > lines.Length)
        {
            return null;
        }

        var text = new StringBuilder();
        for (var line = point.StartLine; line <= Math.Min(point.EndLine, lines.Length); line++)
        {
            var content = lines[line - 1];
            var end = line == point.EndLine ? Math.Min(point.EndColumn - 1, content.Length) : content.Length;
            var start = line == point.StartLine ? Math.Min(point.StartColumn - 1, end) : 0;
            text.Append(content.AsSpan(start, end - start).Trim()).Append(' ');
        }

        return Shorten(text.ToString().Trim());
    }

    private static string Shorten(string statement) =>
        statement.Length <= MaxTextLength ? statement : string.Concat(statement.AsSpan(0, MaxTextLength - 1), "…");
}
