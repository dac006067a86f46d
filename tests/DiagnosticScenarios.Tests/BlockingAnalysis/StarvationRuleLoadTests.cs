using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.Experiments;
using DiagnosticScenarios.Tests.LoadRunner;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// What the starvation rule must not call starvation: the app under loads that are not, on a fresh server of its own (two
/// processors, a cold pool), read from the runtime's counters over the load as <c>watch</c> reads them. The baseline at 125
/// connections keeps the CPU busy with requests that wait for nothing; the CPU scenario spins a thread per request (its
/// concurrency limit answers the rest 429 at once). Each GOOD twin of the families is held to the same in its own class,
/// from the load runs those make.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class StarvationRuleLoadTests(ITestOutputHelper output) : IDisposable
{
    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("rule-load-");

    [Theory]
    [InlineData("api/diagscenario/ping")]
    [InlineData("api/diagscenario/highcpu/50")]
    public async Task TheRule_NeverDeclaresStarvation_UnderALoadThatIsNotStarvation(string route)
    {
        await using var server = await LoadExperiment.StartServerAsync();
        var trace = Path.Combine(_folder.FullName, "load.nettrace");
        string[] load = ["run", "--url", new Uri(server.BaseAddress, route).ToString(), "-c", $"{LoadExperiment.Connections}", "-d", $"{LoadExperiment.Duration.TotalSeconds}s", "--timeout", "10s"];

        Task<(int ExitCode, string Output, string Error)>? loading = null;
        await Task.Factory.StartNew(
            () => WaitAnalyzer.Record(server.ProcessId, () =>
            {
                loading = CommandLineTests.RunAsync(load);
                ((IAsyncResult)loading).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(30));
            }, trace, counters: true),
            CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).TimeoutAfter(TimeSpan.FromSeconds(60));
        var ran = await loading!.DefaultTimeout();
        var waits = WaitAnalyzer.Analyze(trace);

        var seconds = string.Join(", ", waits.Seconds.Select(s => $"q{s.QueueLength}/c{s.CompletedPerSecond:0}/cpu{s.CpuPercent:0}/t{s.ThreadCount}"));
        output.WriteLine($"{route}: {ran.Output}\nseconds: {seconds}");
        Assert.True(ran.ExitCode == 0, ran.Error);
        // A window read under the load, or the test saw nothing the rule could have called starvation.
        Assert.True(waits.Seconds.Count >= StarvationRule.Default.WindowSeconds, $"{waits.Seconds.Count} seconds of counters: {seconds}");
        Assert.True(waits.StarvedAtSecond is null, $"the rule declared starvation once {waits.StarvedAtSecond} s were read: {seconds}");
    }

    public void Dispose() => _folder.Delete(recursive: true);
}
