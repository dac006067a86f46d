using System.Net.Sockets;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>The CLI's answers when there is nothing to diagnose, or nothing left: one line on stderr and a non-zero exit, or usage and 2 for bad arguments.</summary>
[StartsEarly("the CLI started as a process of its own for each case, four of them watching a process for seconds (two of them the app, which they stop): 7–13 s")]
public sealed class DiagnoseCliTests
{
    [Fact]
    public async Task Stacks_ForAProcessIdThatIsNotRunning_ExitsWithOneLineSayingSo()
    {
        var gone = await ExitedProcessIdAsync();

        var run = await DiagnoseCli.RunAsync("stacks", "-p", $"{gone}");

        Assert.Equal(1, run.ExitCode);
        Assert.StartsWith($"error: No process has id {gone}:", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Stacks_ForANonDotNetProcess_ExitsWithOneLineSayingItIsNotDotNet()
    {
        await using var sleep = ChildProcess.Start(new ChildProcessStart("sleep", ["30"]) { TimeLimit = TimeSpan.FromSeconds(30) });
        var run = await DiagnoseCli.RunAsync("stacks", "-p", $"{sleep.Id}");

        Assert.Equal(1, run.ExitCode);
        Assert.Contains($"Process {sleep.Id} (sleep) publishes no .NET diagnostic port", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Watch_ForANonDotNetProcess_ExitsWithOneLineSayingItIsNotDotNet()
    {
        await using var sleep = ChildProcess.Start(new ChildProcessStart("sleep", ["30"]) { TimeLimit = TimeSpan.FromSeconds(30) });
        var run = await DiagnoseCli.RunAsync("watch", "-p", $"{sleep.Id}", "--timeout", "5s");

        Assert.Equal(1, run.ExitCode);
        Assert.Contains($"Process {sleep.Id} (sleep) publishes no .NET diagnostic port", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }

    // A name that matches nothing is said to match nothing, not shown as a stack with no app frame that advises --app.
    [Fact]
    public async Task Stacks_WithAnAppNameThatMatchesNothing_SaySo()
    {
        var run = await DiagnoseCli.RunAsync("stacks", "-p", $"{Environment.ProcessId}", "--requests-window", "0s", "--app", "Northwind.Nowhere");

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains("App code: no module of these stacks is named by --app", run.Output, StringComparison.Ordinal);
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void ParkHere(ManualResetEventSlim release) => release.Wait(TimeSpan.FromSeconds(60));

    // Every app frame carries the line of its call, not only the innermost run: past a framework frame (List.ForEach here,
    // Task.Run's task run inline by the thread that waits for it in an app), the caller that handed the work over gets its
    // line too, in the text, the JSON and speedscope. And --app takes an assembly's file name for the assembly
    // (DiagnosticScenarios.Tests.dll is DiagnosticScenarios.Tests). The test host's stacks, with a thread of this class
    // parked in its own code; --top 1000: the JSON holds the shown groups, and the test host's other threads may be many.
    [Fact]
    public async Task Stacks_GiveTheLineOfAnAppFrameBeyondAFrameworkFrame_WithAppGivenAsAFileName()
    {
        using var release = new ManualResetEventSlim();
        var parked = new Thread(() => ParkThroughTheFramework(release)) { IsBackground = true };
        parked.Start();
        try
        {
            var run = await DiagnoseCli.RunAsync("stacks", "-p", $"{Environment.ProcessId}", "--all-threads", "--requests-window", "0s", "--app", "DiagnosticScenarios.Tests.dll", "--top", "1000", "--format", "json");

            Assert.True(run.ExitCode == 0, run.ToString());
            using var json = System.Text.Json.JsonDocument.Parse(run.Output);
            Assert.Contains(json.RootElement.GetProperty("modules").EnumerateArray(),
                m => m.GetProperty("module").GetString() == "DiagnosticScenarios.Tests" && m.GetProperty("rule").GetString() == "--app DiagnosticScenarios.Tests (assembly name)");
            var group = json.RootElement.GetProperty("groups").EnumerateArray()
                .FirstOrDefault(g => g.GetProperty("frames").EnumerateArray().Any(f => f.GetString()!.Contains($"{nameof(DiagnoseCliTests)}.{nameof(ParkThroughTheFramework)}", StringComparison.Ordinal)));
            Assert.True(group.ValueKind == System.Text.Json.JsonValueKind.Object, $"no group holds the parked thread:\n{run.Output[..Math.Min(run.Output.Length, 2000)]}");
            var outer = group.GetProperty("outerAppFrames").EnumerateArray().Select(f => (Method: f.GetProperty("method").GetString(), Line: f.GetProperty("source").GetProperty("line").GetInt32())).ToList();
            var forEach = (await File.ReadAllLinesAsync(Path.Combine(RepositoryPaths.Root, "tests", "DiagnosticScenarios.Tests", "DotnetBlocking", "DiagnoseCliTests.cs")).DefaultTimeout())
                .Select((text, index) => (text, index)).Single(l => l.text.TrimStart().StartsWith("items.ForEach(", StringComparison.Ordinal)).index + 1;
            Assert.Contains(($"{nameof(DiagnoseCliTests)}.{nameof(ParkThroughTheFramework)}", forEach), outer);
        }
        finally
        {
            release.Set();
            parked.Join(TimeSpan.FromSeconds(5));
        }
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void ParkThroughTheFramework(ManualResetEventSlim release)
    {
        List<int> items = [1];
        items.ForEach(_ => ParkHere(release));
    }

    // The test host, which runs a few functional tests at a time and nothing that blocks its pool, is not starved for the
    // three seconds in a row the rule needs: the watch reads its counters, gives up at its timeout, and says so in its text.
    [Fact]
    public async Task Watch_OnAProcessThatIsNotStarved_SaysSoAtItsTimeout_AndExitsWith3()
    {
        var run = await DiagnoseCli.RunAsync("watch", "-p", $"{Environment.ProcessId}", "--timeout", "3s");

        Assert.True(run.ExitCode == 3, run.ToString());
        Assert.Matches(@"^No starvation within the 3 s timeout \(\d+ seconds read\); the last: ", run.Output);
        Assert.Contains($"Watching process {Environment.ProcessId} for up to 3 s", run.Error, StringComparison.Ordinal);
    }

    // A watched process that ends, crashed or stopped, ends the watch with one line saying so: killed, its session's stream
    // is cut off mid-block, which must not kill the tool; stopped cleanly, the stream ends, which must not leave the watch
    // waiting out its timeout (here longer than the await's bound). Thirty days is past the 24.8 days one wait for a handle
    // can take, which must not throw as the watch begins.
    [Theory]
    [InlineData("KILL", 5)]
    [InlineData("TERM", 30 * 24 * 60)]
    public async Task Watch_WhenTheProcessEnds_EndsWithALineSayingItExited(string signal, int timeoutMinutes)
    {
        await using var app = await OutOfProcessApp.StartAsync();
        await using var watch = await DiagnoseCli.StartWatchingAsync(app.ProcessId, TimeSpan.FromMinutes(timeoutMinutes));

        var kill = await ChildProcess.RunAsync(new ChildProcessStart("kill", [$"-{signal}", $"{app.ProcessId}"]), TimeSpan.FromSeconds(10));
        var run = await watch.WaitForExitAsync().DefaultTimeout();

        Assert.True(kill.ExitCode == 0, kill.ToString());
        Assert.True(run.ExitCode == 1, run.ToString());
        Assert.StartsWith($"error: Process {app.ProcessId} exited ", run.Error.Split('\n', StringSplitOptions.RemoveEmptyEntries)[^1], StringComparison.Ordinal);
    }

    // A .NET process killed without the chance to remove its diagnostic socket leaves the file, named after its id, which a
    // later process may reuse (the servers the tests kill leave such files).
    [Fact]
    public async Task Stacks_ForANonDotNetProcessWhoseIdALeftoverDiagnosticSocketNames_SaysItIsNotDotNet()
    {
        await using var sleep = ChildProcess.Start(new ChildProcessStart("sleep", ["30"]) { TimeLimit = TimeSpan.FromSeconds(30) });
        // Bound but never listening, the socket file refuses connections as a dead process's does; it stays open while the
        // CLI runs because closing a bound Unix socket in .NET removes its file.
        using var leftover = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        leftover.Bind(new UnixDomainSocketEndPoint(Path.Combine(Path.GetTempPath(), $"dotnet-diagnostic-{sleep.Id}-1-socket")));

        var run = await DiagnoseCli.RunAsync("stacks", "-p", $"{sleep.Id}");

        Assert.Equal(1, run.ExitCode);
        Assert.Contains($"Process {sleep.Id} (sleep) publishes no .NET diagnostic port (its id's socket file was left by an earlier process", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Waits_ForANameNoProcessHas_ExitsWithOneLineSayingSo()
    {
        var run = await DiagnoseCli.RunAsync("waits", "-n", "NoSuchDiagnosticScenariosProcess", "--duration", "1s");

        Assert.Equal(1, run.ExitCode);
        Assert.Contains("No process is named 'NoSuchDiagnosticScenariosProcess' or runs NoSuchDiagnosticScenariosProcess.dll", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Stacks_DeletesTheTraceFoldersOfProcessesThatAreGone_KeepsThoseOfRunningOnes_AndLeavesNoneOfItsOwn()
    {
        // What a server killed mid-capture leaves (the load runner and the tests kill starved servers), and the folder of a
        // process still running.
        var stale = Directory.CreateTempSubdirectory(ScratchFiles.FolderPrefixOf(await ExitedProcessIdAsync()));
        await File.WriteAllTextAsync(Path.Combine(stale.FullName, "stacks-1.nettrace"), "a capture its process was killed before it could delete");
        await using var sleep = ChildProcess.Start(new ChildProcessStart("sleep", ["30"]) { TimeLimit = TimeSpan.FromSeconds(30) });
        var running = Directory.CreateTempSubdirectory(ScratchFiles.FolderPrefixOf(sleep.Id));
        try
        {
            await using var cli = ChildProcess.Start(new ChildProcessStart("dotnet", [DiagnoseCli.Path, "stacks", "-p", $"{Environment.ProcessId}", "--requests-window", "0s"])
            {
                WorkingDirectory = RepositoryPaths.Root,
                TimeLimit = TimeSpan.FromSeconds(30),
            });
            var run = await cli.WaitForExitAsync();

            Assert.True(run.ExitCode == 0, run.ToString());
            Assert.False(Directory.Exists(stale.FullName), $"{stale.FullName} is still there");
            Assert.True(Directory.Exists(running.FullName), $"{running.FullName}, of a running process, was deleted");
            Assert.Empty(Directory.GetDirectories(Path.GetTempPath(), ScratchFiles.FolderPrefixOf(cli.Id) + "*"));
        }
        finally
        {
            sleep.Kill();
            running.Delete(recursive: true);
            if (Directory.Exists(stale.FullName))
            {
                stale.Delete(recursive: true);
            }
        }
    }

    [Theory]
    [InlineData("stacks")]
    [InlineData("stacks", "-p", "1", "-n", "DiagnosticScenarios")]
    [InlineData("frobnicate")]
    public async Task BadArguments_PrintUsage_AndExitWith2(params string[] arguments)
    {
        var run = await DiagnoseCli.RunAsync(arguments);

        Assert.Equal(2, run.ExitCode);
        Assert.Contains("Usage:", run.Error, StringComparison.Ordinal);
    }

    /// In the option's words, not the parser's type name ("…as expected type 'System.Nullable`1[System.Int32]'").
    [Theory]
    [InlineData("--process-id must be a process id, a whole number such as 1234 (ps or dotnet-trace ps lists them), not 'abc'.", "stacks", "-p", "abc")]
    [InlineData("--process-id must be a process id, a whole number such as 1234 (ps or dotnet-trace ps lists them), not '-5'.", "waits", "-p=-5")]
    [InlineData("--format must be text, json or speedscope, not 'xml'.", "stacks", "-p", "1", "--format", "xml")]
    [InlineData("--format must be text, json or speedscope, not '1'.", "stacks", "-p", "1", "--format", "1")]
    [InlineData("--format must be text, json or speedscope, not 'xml'.", "waits", "-p", "1", "--format", "xml")]
    [InlineData("--format must be text, json or speedscope, not 'xml'.", "watch", "-p", "1", "--format", "xml")]
    [InlineData("--app needs a namespace or an assembly name, e.g. --app Contoso.Orders.", "stacks", "-p", "1", "--app", "")]
    [InlineData("--name needs a process name, e.g. DiagnosticScenarios.", "stacks", "-n", "")]
    [InlineData("--name needs a process name, e.g. DiagnosticScenarios.", "waits", "-n", " ")]
    [InlineData("--top takes a whole number of 1 or more, not 'abc'.", "stacks", "-p", "1", "--top", "abc")]
    [InlineData("--top takes a whole number of 1 or more, not '0'.", "waits", "-p", "1", "--top", "0")]
    [InlineData("--output needs a file's path, not ''.", "stacks", "-p", "1", "-o", "")]
    public async Task AValueOfTheWrongKind_IsNamedInTheOptionsWords_AndExitsWith2(string message, params string[] arguments)
    {
        var run = await DiagnoseCli.RunAsync(arguments);

        Assert.Equal(2, run.ExitCode);
        Assert.Equal(message, run.Error.Split('\n')[0].Trim());
        Assert.DoesNotContain("System.", run.Error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("a folder that does not exist", "--output's folder")]
    [InlineData("a folder", "--output names a folder")]
    public async Task Output_ThatCannotBeWritten_IsRefusedBeforeAnyCapture_WithExitCode2(string what, string refusal)
    {
        var folder = Directory.CreateTempSubdirectory("dotnet-blocking-output-");
        try
        {
            var output = what == "a folder" ? folder.FullName : Path.Combine(folder.FullName, "missing", "stacks.json");

            // Process 1 is no .NET app: had the command gone as far as a capture, it would have said so instead, exit code 1.
            var run = await DiagnoseCli.RunAsync("stacks", "-p", "1", "-o", output);

            Assert.True(run.ExitCode == 2, run.ToString());
            Assert.Contains(refusal, run.Error, StringComparison.Ordinal);
            Assert.DoesNotContain("diagnostic port", run.Error, StringComparison.Ordinal);
        }
        finally
        {
            folder.Delete(recursive: true);
        }
    }

    // A process that has just exited: its id is not running (ids are not reused at once).
    private static async Task<int> ExitedProcessIdAsync()
    {
        await using var process = ChildProcess.Start(new ChildProcessStart("true", []) { TimeLimit = TimeSpan.FromSeconds(10) });
        await process.WaitForExitAsync();
        return process.Id;
    }
}
