using DiagnosticScenarios.Common;
using System.Reflection;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>The diagnosis CLI as a user runs it: <c>dotnet dotnet-blocking.dll …</c>, to its end, bounded.</summary>
internal static class DiagnoseCli
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    public static string Path { get; } = typeof(DiagnoseCli).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "DiagnoseCliPath").Value!;

    public static Task<ChildProcessResult> RunAsync(params string[] arguments) =>
        ChildProcess.RunAsync(new ChildProcessStart("dotnet", [Path, .. arguments]) { WorkingDirectory = RepositoryPaths.Root }, Timeout);
}
