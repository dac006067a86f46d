using System.Text.Json;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>Writes the files of a <see cref="ComparisonResult"/>: the Markdown report, the JSON and the chart.</summary>
public static class CompareReportWriter
{
    /// <summary>Writes <c>compare.md</c>, <c>compare.json</c> and <c>compare.svg</c> into the directory and returns their paths.</summary>
    public static async Task<IReadOnlyList<string>> WriteAsync(ComparisonResult result, string directory, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(result);
        Directory.CreateDirectory(directory);
        var markdown = Path.Combine(directory, "compare.md");
        var json = Path.Combine(directory, "compare.json");
        var svg = Path.Combine(directory, "compare.svg");
        await File.WriteAllTextAsync(markdown, CompareTable.Markdown(result, "compare.svg"), cancellationToken);
        await File.WriteAllTextAsync(json, JsonSerializer.Serialize(result, CompareJson.Options), cancellationToken);
        await File.WriteAllTextAsync(svg, CompareChart.Render(result), cancellationToken);
        return [markdown, json, svg];
    }
}
