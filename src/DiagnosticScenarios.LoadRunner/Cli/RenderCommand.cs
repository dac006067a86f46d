using System.CommandLine;
using System.Text.Json;
using DiagnosticScenarios.LoadRunner.Compare;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary><c>render</c>: the table and the files of a comparison again, from its compare.json.</summary>
internal sealed class RenderCommand(TextWriter output, TextWriter error)
{
    private readonly Option<FileInfo> _from = new Option<FileInfo>("--from") { Description = "A compare.json.", Required = true }.AcceptExistingOnly();
    private readonly Option<string?> _out = new("--out") { Description = "Where to write the files (default: next to --from)." };

    public Command Create()
    {
        var command = new Command("render", "Writes the table, compare.md and compare.svg again from a compare.json.") { _from, _out };
        command.SetAction(RunAsync);
        return command;
    }

    private async Task<int> RunAsync(ParseResult parse, CancellationToken cancellationToken)
    {
        var source = parse.GetRequiredValue(_from);
        var directory = parse.GetValue(_out) ?? source.DirectoryName!;
        var result = await ReadAsync(source, cancellationToken);
        await output.WriteAsync(CompareTable.Render(result));
        return await ReportFiles.WriteAsync(result, ReportFiles.Folder(directory), output, error, cancellationToken);
    }

    private static async Task<ComparisonResult> ReadAsync(FileInfo source, CancellationToken cancellationToken)
    {
        await using var json = source.OpenRead();
        try
        {
            return await JsonSerializer.DeserializeAsync<ComparisonResult>(json, CompareJson.Options, cancellationToken)
                ?? throw new UsageException($"{source.FullName} holds no comparison.");
        }
        catch (JsonException e)
        {
            throw new UsageException($"{source.FullName} is not a compare.json: {e.Message}");
        }
    }
}
