using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.Tests.Load;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>
/// Wait analysis (WaitHandleWait events) of a server process under a steady stream of blocking requests: waits must start
/// while the trace records, so the requests are short and keep coming.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class WaitAnalysisTests(ITestOutputHelper output)
{
    private const int Workers = 20;
    private const int DelayMs = 300;
    private static readonly TimeSpan Session = TimeSpan.FromSeconds(3);
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(1);
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    [Fact]
    public async Task LiveWaits_UnderTaskSleepWait_NeverNameTaskSleepWait_ThoughTheTraceHasWaits()
    {
        await using var server = await BlockedServer.StartAsync();
        server.Loop("tasksleepwait", Workers, DelayMs);
        await Task.Delay(Settle);

        var analysis = await WaitAnalyzer.CaptureOnDedicatedThreadAsync(server.ProcessId, Session).DefaultTimeout();

        Write(analysis);

        // The app's own dedicated threads wait on events all the time: a trace without any wait would prove nothing.
        Assert.True(analysis.Waits > 0, "the session recorded no WaitHandleWait event at all");
        // Whether the JIT kept the action's frame or inlined it, no wait started in Thread.Sleep.
        Assert.DoesNotContain(analysis.Sites, s => s.AppFrames.Any(f => f.Method == "StarvationScenariosController.TaskSleepWait")
            || s.Frames.Any(f => f.Contains("System.Threading.Thread.Sleep", StringComparison.Ordinal)));
    }

    [Fact]
    public async Task LiveWaits_AndADotnetTraceFileReadByTheCli_UnderTaskWait_BothNameTaskWaitOnTaskResultAsTheTopPoolSite()
    {
        await using var server = await BlockedServer.StartAsync();
        server.Loop("taskwait", Workers, DelayMs);
        await Task.Delay(Settle);
        var trace = Path.Combine(Path.GetTempPath(), $"waits-{Guid.NewGuid():N}.nettrace");
        try
        {
            // The workshop's exact command, from the repository's tool manifest, records the same stream of requests as the
            // live session does, at the same time (a process serves several EventPipe sessions at once).
            var live = WaitAnalyzer.CaptureOnDedicatedThreadAsync(server.ProcessId, Session);
            var collect = await DotnetTools.RunAsync("dotnet-trace",
                ["collect", "-p", $"{server.ProcessId}", "--clrevents", "waithandle", "--clreventlevel", "verbose", "--duration", Session.ToString(@"hh\:mm\:ss", CultureInfo.InvariantCulture), "-o", trace],
                TimeSpan.FromSeconds(60));
            Assert.True(collect.ExitCode == 0 && File.Exists(trace), collect.ToString());
            var cli = await DiagnoseCli.RunAsync("waits", trace, "--json");
            Assert.True(cli.ExitCode == 0, cli.Error);
            var fromFile = JsonSerializer.Deserialize<WaitAnalysis>(cli.Output, Json)!;

            var liveAnalysis = await live.DefaultTimeout();

            Write(liveAnalysis);
            Write(fromFile);
            AssertTopSiteIsTaskWait(liveAnalysis);
            AssertTopSiteIsTaskWait(fromFile);
        }
        finally
        {
            File.Delete(trace);
        }
    }

    // The app runs a Release build: the JIT may inline the sync action into ASP.NET Core's invoker, and then the site says
    // so instead of naming the action; where the frame survives, it carries the action's line.
    private static void AssertTopSiteIsTaskWait(WaitAnalysis analysis)
    {
        var top = analysis.TopSite();
        Assert.NotNull(top);
        Assert.True(BlockedStacks.NamesLine(top.AppFrames, "StarvationScenariosController.TaskWait") || top.InlinedInto is not null,
            $"the top site names neither TaskWait's line nor an invoker it was inlined into: {top.Describe()}");
        Assert.Equal(BlockingKind.TaskWait, top.Blocking!.Kind);
    }

    private void Write(WaitAnalysis analysis)
    {
        output.WriteLine($"{analysis.Waits} waits, {analysis.PoolWaits} on pool threads, {analysis.DurationMs} ms");
        foreach (var site in analysis.Sites.Take(5))
        {
            output.WriteLine(site.Describe());
        }
    }
}
