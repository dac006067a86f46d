using System.Globalization;
using System.Reflection;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>The diagnosis CLI as a user runs it: <c>dotnet dotnet-blocking.dll …</c>, to its end, bounded; or <c>watch</c>, left running.</summary>
internal static class DiagnoseCli
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    public static string Path { get; } = typeof(DiagnoseCli).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "DiagnoseCliPath").Value!;

    public static Task<ChildProcessResult> RunAsync(params string[] arguments) =>
        ChildProcess.RunAsync(new ChildProcessStart("dotnet", [Path, .. arguments]) { WorkingDirectory = RepositoryPaths.Root }, Timeout);

    /// <summary>The one line an error run printed on stderr; fails when it printed none or several (a stack trace, say).</summary>
    public static string OneLine(string error)
    {
        var lines = error.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.True(lines.Length == 1, $"expected one line on stderr, got:\n{error}");
        return lines[0];
    }

    /// <summary>
    /// Starts <c>watch -p <paramref name="processId"/> --timeout <paramref name="timeout"/> --json</c> and returns it once its
    /// first line says it is watching (printed once its session is on), for the caller to start a load then and wait for
    /// its exit; fails, with its output, when it ends before that.
    /// </summary>
    /// <param name="more">More options for the watch, e.g. <c>--dump DIR</c>.</param>
    public static async Task<ChildProcess> StartWatchingAsync(int processId, TimeSpan timeout, params string[] more)
    {
        var watching = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var watch = ChildProcess.Start(new ChildProcessStart("dotnet",
            [Path, "watch", "-p", processId.ToString(CultureInfo.InvariantCulture), "--timeout", string.Create(CultureInfo.InvariantCulture, $"{timeout.TotalSeconds:0}s"), "--json", .. more])
        {
            WorkingDirectory = RepositoryPaths.Root,
            TimeLimit = timeout + TimeSpan.FromSeconds(60),
            OnErrorLine = line =>
            {
                if (line.StartsWith("Watching process ", StringComparison.Ordinal))
                {
                    watching.TrySetResult();
                }
            },
        });
        return await watch.WhenReadyAsync(watching.Task, Timeout, "watch ended before it was watching");
    }
}
