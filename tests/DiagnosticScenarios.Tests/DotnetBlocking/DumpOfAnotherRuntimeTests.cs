using System.Runtime.InteropServices;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.BlockingAnalysis;
using Microsoft.Diagnostics.NETCore.Client;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// <c>stacks FILE</c> on a dump of a runtime this machine does not have: the fixture app run on a runtime of its own, the
/// shared one's files linked into a folder of the test's, which is gone once the dump is written. Nothing is loaded.
/// </summary>
public sealed class DumpOfAnotherRuntimeTests : IDisposable
{
    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("dump-runtime-");

    [Fact]
    public async Task Stacks_OfADumpWhoseRuntimeIsNotOnThisMachine_ExitsWithOneLineNamingTheMissingDac()
    {
        var root = Path.Combine(_folder.FullName, "dotnet");
        await LinkRuntimeAsync(root);
        var fixture = FixtureApp.ContosoOrders("Release");
        var start = new ChildProcessStart(Path.Combine(root, "dotnet"), [fixture.ServerOptions.AppPath, "--urls", "http://127.0.0.1:0"])
        {
            Environment = new Dictionary<string, string?> { ["DOTNET_ROOT"] = root },
            TimeLimit = TimeSpan.FromSeconds(60),
        };
        string dump;
        await using (var app = ChildProcess.Start(start))
        {
            Assert.True(await Poll.UntilAsync(() => DiagnosticsClient.GetPublishedProcesses().Contains(app.Id), TimeSpan.FromSeconds(30)), "No diagnostic port within 30 s");
            dump = await Task.Run(() => ProcessDumps.Write(app.Id, Path.Combine(_folder.FullName, "dumps"), DumpType.Normal)).TimeoutAfter(TimeSpan.FromSeconds(60));
        }

        Directory.Delete(root, recursive: true);
        var run = await DiagnoseCli.RunAsync("stacks", dump);

        var runtime = Path.Combine(root, "shared", "Microsoft.NETCore.App", Path.GetFileName(RuntimeEnvironment.GetRuntimeDirectory().TrimEnd('/')));
        Assert.Equal(1, run.ExitCode);
        Assert.StartsWith($"error: {dump} is a dump of the .NET runtime in {runtime}, whose DAC (libmscordaccore.so) is not on this machine: ",
            DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }

    public void Dispose() => _folder.Delete(recursive: true);

    // The installed host and the two frameworks the app runs on, hard-linked where the file system allows it, else copied:
    // the dump names the folder they were loaded from, not the originals.
    private static async Task LinkRuntimeAsync(string root)
    {
        var core = RuntimeEnvironment.GetRuntimeDirectory().TrimEnd('/');
        var aspNetCore = Path.GetDirectoryName(typeof(Microsoft.AspNetCore.Builder.WebApplication).Assembly.Location)!;
        var installed = Path.GetFullPath(Path.Combine(core, "..", "..", ".."));
        var shared = Directory.CreateDirectory(Path.Combine(root, "shared")).FullName;
        string[][] copies =
        [
            [Path.Combine(installed, "dotnet"), Path.Combine(installed, "host"), root],
            [core, Directory.CreateDirectory(Path.Combine(shared, "Microsoft.NETCore.App")).FullName],
            [aspNetCore, Directory.CreateDirectory(Path.Combine(shared, "Microsoft.AspNetCore.App")).FullName],
        ];
        foreach (var copy in copies)
        {
            var linked = await ChildProcess.RunAsync(new ChildProcessStart("cp", ["-al", .. copy]), TimeSpan.FromSeconds(60));
            var result = linked.ExitCode == 0 ? linked : await ChildProcess.RunAsync(new ChildProcessStart("cp", ["-a", .. copy]), TimeSpan.FromSeconds(120));
            Assert.True(result.ExitCode == 0, result.ToString());
        }
    }
}
