using System.Diagnostics;
using System.Reflection;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>A command-line tool run to its end, bounded: the diagnosis CLI, or the manifest's dotnet-trace.</summary>
internal sealed record ToolRun(int ExitCode, string Output, string Error)
{
    public static string CliPath { get; } = typeof(ToolRun).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "DiagnoseCliPath").Value!;

    /// <summary>The diagnosis CLI with <paramref name="arguments"/>.</summary>
    public static Task<ToolRun> CliAsync(params string[] arguments) => RunAsync("dotnet", [CliPath, .. arguments], RepositoryPaths.Root, TimeSpan.FromSeconds(30));

    public static async Task<ToolRun> RunAsync(string fileName, IEnumerable<string> arguments, string workingDirectory, TimeSpan timeout)
    {
        var start = new ProcessStartInfo(fileName)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = workingDirectory,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"{fileName} did not start.");
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        try
        {
            await process.WaitForExitAsync().WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{fileName} {string.Join(' ', start.ArgumentList)} did not finish within {timeout}:\n{await output}\n{await error}");
        }

        return new ToolRun(process.ExitCode, await output.DefaultTimeout(), await error.DefaultTimeout());
    }
}
