using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// The tools of the repository's manifest (.config/dotnet-tools.json), run as the workshop runs them. The suite restores
/// the manifest itself, once, before the first test that needs a tool, whichever runs first: a machine that has never
/// seen the repository has none of them.
/// </summary>
internal static class DotnetTools
{
    public static readonly TimeSpan RestoreTimeout = TimeSpan.FromMinutes(3);
    private static readonly Lock Gate = new();
    private static Task? _restored;

    /// <summary><c>dotnet tool run TOOL -- ARGS</c> from the repository's root, once the manifest is restored.</summary>
    public static async Task<ChildProcessResult> RunAsync(string tool, IEnumerable<string> arguments, TimeSpan timeout)
    {
        await EnsureRestoredAsync().TimeoutAfter(RestoreTimeout);
        return await ChildProcess.RunAsync(
            new ChildProcessStart("dotnet", ["tool", "run", tool, "--", .. arguments]) { WorkingDirectory = RepositoryPaths.Root },
            timeout);
    }

    /// <summary>
    /// Starts <c>dotnet tool run TOOL -- ARGS</c> from the repository's root, once the manifest is restored, for a tool that
    /// runs beside a test (a trace recorded while a load runs): each line of its output is handed to <paramref name="onOutputLine"/>.
    /// </summary>
    public static async Task<ChildProcess> StartAsync(string tool, IEnumerable<string> arguments, Action<string> onOutputLine, TimeSpan timeLimit)
    {
        await EnsureRestoredAsync().TimeoutAfter(RestoreTimeout);
        return ChildProcess.Start(new ChildProcessStart("dotnet", ["tool", "run", tool, "--", .. arguments])
        {
            WorkingDirectory = RepositoryPaths.Root,
            OnOutputLine = onOutputLine,
            TimeLimit = timeLimit,
        });
    }

    /// <summary>
    /// Restores the manifest, once: the first caller starts the restore, every later one awaits the same restore, finished or
    /// not. The observed runs call it before their first load, so that on a fresh machine the restore does not share the
    /// cores with a measurement.
    /// </summary>
    public static Task EnsureRestoredAsync()
    {
        lock (Gate)
        {
            return _restored ??= RestoreAsync();
        }
    }

    private static async Task RestoreAsync()
    {
        var restore = await ChildProcess.RunAsync(new ChildProcessStart("dotnet", ["tool", "restore"]) { WorkingDirectory = RepositoryPaths.Root }, RestoreTimeout);
        if (restore.ExitCode != 0)
        {
            throw new InvalidOperationException($"The repository's tool manifest could not be restored: {restore}");
        }
    }
}
