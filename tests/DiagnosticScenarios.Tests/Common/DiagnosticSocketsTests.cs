using System.Globalization;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Common;

/// <summary>A .NET process that the product or the tests kill leaves no diagnostic socket file behind in the temporary folder.</summary>
public sealed class DiagnosticSocketsTests
{
    [LinuxFact]
    public async Task AServerKilledAtItsEnd_LeavesNoSocketFile_ThoughItHadOneWhileItRan()
    {
        var server = await OutOfProcessApp.StartAsync();
        var pattern = string.Create(CultureInfo.InvariantCulture, $"dotnet-diagnostic-{server.ProcessId}-*-socket");
        bool listened;
        try
        {
            // Its own file is keyed by its start time (/proc/{pid}/stat's 22nd field); one of an earlier process that had
            // the same id may be there too.
            var stat = await File.ReadAllTextAsync($"/proc/{server.ProcessId}/stat");
            var startTime = stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[22 - 3];
            listened = File.Exists(Path.Combine(Path.GetTempPath(), $"dotnet-diagnostic-{server.ProcessId}-{startTime}-socket"));
        }
        finally
        {
            await server.DisposeAsync();
        }

        Assert.True(listened, $"no socket file keyed by the server's start time among {string.Join(", ", Directory.GetFiles(Path.GetTempPath(), pattern))}");
        Assert.Empty(Directory.GetFiles(Path.GetTempPath(), pattern));
    }

    [LinuxFact]
    public async Task Tree_HoldsTheProcessItsChildAndItsGrandchild_OnLinux()
    {
        // bash starts a second bash that starts sleep, and prints both ids.
        await using var parent = ChildProcess.Start(new ChildProcessStart("bash", ["-c", "bash -c 'sleep 30 & echo $!; wait' & echo $!; wait"]) { TimeLimit = TimeSpan.FromSeconds(30) });
        Assert.True(await Poll.UntilAsync(() => parent.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length >= 2, TimeSpan.FromSeconds(10)), $"printed: {parent.Output}");
        var descendants = parent.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(id => int.Parse(id, CultureInfo.InvariantCulture));

        var tree = DiagnosticSockets.Tree(parent.Id);

        int[] expected = [parent.Id, .. descendants.Order()];
        int[] actual = [tree[0], .. tree.Skip(1).Order()];
        Assert.Equal(expected, actual);
    }
}

/// <summary>A test of what only Linux has (<c>/proc</c>): elsewhere a visible skip.</summary>
public sealed class LinuxFactAttribute : FactAttribute
{
    public LinuxFactAttribute()
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = "reads /proc: runs on Linux only";
        }
    }
}
