using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using DiagnosticScenarios.BlockingAnalysis;

namespace DotnetBlocking;

/// <summary>Writes a verb's report in the format asked, to the console or to the <c>--output</c> file.</summary>
internal sealed class ReportWriter(ReportFormat format, FileInfo? path, TextWriter console)
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { WriteIndented = true, DefaultIgnoreCondition = JsonIgnoreCondition.Never };

    /// <summary>Writes <paramref name="text"/>'s report, <paramref name="model"/> as JSON, or the speedscope file; then names the file, if there is one.</summary>
    public void Write<T>(Action<TextWriter> text, T model, Action<Stream>? speedscope = null)
    {
        using var stream = path is null ? null : CreateReport(path);
        using var fileWriter = stream is null ? null : new StreamWriter(stream);
        var writer = fileWriter ?? console;
        switch (format)
        {
            case ReportFormat.Json:
                writer.WriteLine(JsonSerializer.Serialize(model, Json));
                break;
            case ReportFormat.Speedscope when stream is not null:
                speedscope!(stream);
                break;
            case ReportFormat.Speedscope:
                using (var buffer = new MemoryStream())
                {
                    speedscope!(buffer);
                    writer.WriteLine(Encoding.UTF8.GetString(buffer.ToArray()));
                }

                break;
            default:
                text(writer);
                break;
        }

        if (path is not null)
        {
            console.WriteLine($"Wrote {path.FullName}");
        }
    }

    private static FileStream CreateReport(FileInfo path)
    {
        try
        {
            return File.Create(path.FullName);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new DiagnosisException(DiagnosisFailure.ReportNotWritten, $"The report could not be written to {path.FullName}: {e.Message}", e);
        }
    }
}

/// <summary>How a report is written.</summary>
internal enum ReportFormat
{
    Text,
    Json,
    Speedscope,
}
