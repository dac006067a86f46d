using DiagnosticScenarios.Common.CommandLines;
using DiagnosticScenarios.LoadRunner.Compare;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary>Where <c>compare</c> and <c>render</c> write compare.md, compare.json and compare.svg.</summary>
internal static class ReportFiles
{
    /// <summary>The folder for the files, created before any measurement, so that minutes of it never end with nowhere to write.</summary>
    public static string Folder(string directory)
    {
        try
        {
            return Directory.CreateDirectory(directory).FullName;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new UsageException($"--out {directory} cannot be a folder for the files: {e.Message}");
        }
    }

    // The table is on stdout already when this runs: a failure here loses the files, not the measurement.
    public static async Task<int> WriteAsync(ComparisonResult result, string directory, TextWriter output, TextWriter error, CancellationToken cancellationToken)
    {
        try
        {
            foreach (var file in await CompareReportWriter.WriteAsync(result, directory, cancellationToken))
            {
                await output.WriteLineAsync($"wrote {file}");
            }

            return ExitCodes.Done;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            await error.WriteLineAsync($"The files could not be written to {directory} ({e.Message}); the table above is the result.");
            return ExitCodes.Failed;
        }
    }
}
