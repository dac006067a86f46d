using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// The files git tracks in the repository, as paths relative to its root with '/' between folders: what a reader of the
/// repository on GitHub sees, without the build's output or what a run left behind (results/, TestResults/).
/// </summary>
internal static class TrackedFiles
{
    /// <summary>Every tracked file, in ordinal order; <c>git ls-files</c> is read again each time (it takes milliseconds).</summary>
    public static Task<IReadOnlyList<string>> PathsAsync() => ListAsync().DefaultTimeout();

    /// <summary>The folders that hold a tracked file at any depth, each as its path with a trailing '/'.</summary>
    public static IReadOnlySet<string> FoldersOf(IEnumerable<string> paths) => paths
        .SelectMany(path =>
        {
            var parts = path.Split('/');
            return Enumerable.Range(1, parts.Length - 1).Select(depth => string.Join('/', parts[..depth]) + "/");
        })
        .ToHashSet(StringComparer.Ordinal);

    private static async Task<IReadOnlyList<string>> ListAsync()
    {
        var git = await ChildProcess.RunAsync(
            new ChildProcessStart("git", ["ls-files", "-z"]) { WorkingDirectory = RepositoryPaths.Root }, TimeSpan.FromSeconds(30));
        if (git.ExitCode != 0 || git.TimedOut)
        {
            throw new InvalidOperationException($"git ls-files failed in {RepositoryPaths.Root}: {git}");
        }

        return [.. git.Output.Split('\0', StringSplitOptions.RemoveEmptyEntries).Order(StringComparer.Ordinal)];
    }
}
