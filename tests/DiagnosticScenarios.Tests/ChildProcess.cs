using System.Diagnostics;
using System.Text;

namespace DiagnosticScenarios.Tests;

/// <summary>
/// Runs a command to its end, bounded in time, and answers its exit code and output. A command that overstays is
/// killed with its whole process tree, and the timeout names the command and what it had written. Every command a test
/// runs to its end goes through here: the diagnosis CLI, dotnet-trace, the load runner, the scripts.
/// </summary>
internal static class ChildProcess
{
    /// <param name="onErrorLine">Called with each line of standard error as it arrives, for a test that acts while the command runs.</param>
    public static async Task<ChildProcessResult> RunAsync(
        string fileName,
        IEnumerable<string> arguments,
        TimeSpan timeout,
        string? workingDirectory = null,
        IReadOnlyDictionary<string, string>? environment = null,
        Action<string>? onErrorLine = null)
    {
        var start = new ProcessStartInfo(fileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory ?? string.Empty,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        foreach (var (key, value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[key] = value;
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {fileName}.");
        var output = process.StandardOutput.ReadToEndAsync();
        var error = onErrorLine is null ? process.StandardError.ReadToEndAsync() : ReadLinesAsync(process.StandardError, onErrorLine);
        var commandLine = string.Join(' ', start.ArgumentList.Prepend(fileName));
        try
        {
            await process.WaitForExitAsync().WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{commandLine} did not finish within {timeout}:\n{await output}\n{await error}");
        }

        return new ChildProcessResult(commandLine, process.ExitCode, await output.DefaultTimeout(), await error.DefaultTimeout());
    }

    private static async Task<string> ReadLinesAsync(StreamReader reader, Action<string> onLine)
    {
        var text = new StringBuilder();
        while (await reader.ReadLineAsync() is { } line)
        {
            text.AppendLine(line);
            onLine(line);
        }

        return text.ToString();
    }
}

/// <summary>How a command ended.</summary>
internal sealed record ChildProcessResult(string CommandLine, int ExitCode, string Output, string Error)
{
    public override string ToString() => $"{CommandLine} exited with {ExitCode}:\n{Output}\n{Error}";
}
