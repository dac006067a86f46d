using System.Runtime.CompilerServices;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.Tests.LoadRunner;

/// <summary>
/// The SQL article's think time (siege -d 0.2: each user pauses a random time up to 200 ms between requests), reproduced
/// by the runner's <c>--think-time</c> and by <c>scripts/load.sh</c> with <c>THINK_TIME</c>, against a ping that answers at
/// once: the pauses, not the server, then set the pace. Each is measured against the same load without the pauses, whose
/// rate is the server's and the machine's, which beside the functional tests can fall far below an idle machine's; so the
/// class is a measurement.
/// The two loads run at once, on the same server: the paused clients' twenty pings a second take nothing measurable from
/// the back-to-back ones, and both sides share whatever else the machine is doing at that moment.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class ThinkTimeTests
{
    private const int Clients = 2;
    private static readonly TimeSpan Duration = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan ThinkTime = TimeSpan.FromMilliseconds(200);

    [Fact]
    public async Task Runner_PausesEachClientUpToTheThinkTime_SoTwoClientsSendAboutTwentyRequestsASecond()
    {
        await using var server = await OutOfProcessApp.StartAsync();
        var ping = new Uri(server.BaseAddress, "api/diagscenario/ping");

        // Through the runner's command line, as people type it, both sides.
        string[] load = ["run", "--url", ping.ToString(), "-c", $"{Clients}", "-d", $"{Duration.TotalSeconds:0}s", "--json"];
        var thinkingRun = RunnerReportAsync([.. load, "--think-time", $"{ThinkTime.TotalMilliseconds:0}ms"]);
        var backToBackRun = RunnerReportAsync(load);
        var thinking = await thinkingRun;
        var backToBack = await backToBackRun;

        // A pause averages 100 ms, so each client sends about 20 requests in 2 s, 40 in all; the sum of 20 uniform pauses
        // spreads by about ±0.26 s, so the count stays well within 25–60. Back to back, a ping takes about a millisecond.
        Assert.InRange(thinking.Completed, 25, 60);
        Assert.True(backToBack.Completed > 10 * thinking.Completed, $"back to back {backToBack.Completed}, with the think time {thinking.Completed}");
    }

    [SiegeFact]
    public async Task LoadScript_PassesTheThinkTimeToSiege_AsTheArticlesRunsDid()
    {
        await using var server = await OutOfProcessApp.StartAsync();

        var thinkingRun = SiegeTransactionsAsync(server, thinkTime: "0.2");
        var backToBackRun = SiegeTransactionsAsync(server, thinkTime: null);
        var thinking = await thinkingRun;
        var backToBack = await backToBackRun;

        // siege pauses each user a random time up to -d seconds; two users in a run of about two seconds send a few dozen.
        Assert.InRange(thinking, 5, 60);
        Assert.True(backToBack > 10 * thinking, $"siege -b sent {backToBack}, with -d 0.2 {thinking}");
    }

    private static async Task<LoadReport> RunnerReportAsync(string[] arguments)
    {
        var (exitCode, output, error) = await CommandLineTests.RunAsync(arguments);
        Assert.True(exitCode == 0, $"run {string.Join(' ', arguments)}: exit {exitCode}\n{error}");
        return JsonSerializer.Deserialize<LoadReport>(output, new JsonSerializerOptions(JsonSerializerDefaults.Web))
            ?? throw new InvalidOperationException($"run --json printed no report: {output}");
    }

    // load.sh's exit code when siege had to be killed (128 + SIGKILL).
    private const int SiegeKilled = 137;

    private const int SiegeAttempts = 3;

    private static async Task<long> SiegeTransactionsAsync(ServerProcess server, string? thinkTime)
    {
        var environment = new Dictionary<string, string?> { ["BASE_URL"] = server.BaseAddress.ToString().TrimEnd('/'), ["LOAD_TOOL"] = "siege", ["THINK_TIME"] = thinkTime };
        var start = new ChildProcessStart("bash", [Path.Combine(RepositoryPaths.Root, "scripts", "load.sh"), "ping", $"{Clients}", $"{Duration.TotalSeconds}s"])
        {
            WorkingDirectory = Path.GetTempPath(),
            Environment = environment,
        };
        // Debian's siege 4.0.7 sometimes never ends once its time is up: it cancels its workers asynchronously, and one
        // cancelled inside malloc exits holding its arena's lock, while the main thread waits to join it. No signal wakes it, so
        // load.sh kills it and it prints no summary: that run measured nothing, and another is asked for, up to three in all.
        var run = await ChildProcess.RunAsync(start, TimeSpan.FromSeconds(60));
        for (var attempt = 2; attempt <= SiegeAttempts && run.ExitCode == SiegeKilled; attempt++)
        {
            run = await ChildProcess.RunAsync(start, TimeSpan.FromSeconds(60));
        }

        Assert.True(run.ExitCode == 0, run.ToString());

        // siege prints its summary as JSON on standard output, after a line or two of its own.
        var summary = run.Output[run.Output.IndexOf('{', StringComparison.Ordinal)..];
        return JsonDocument.Parse(summary).RootElement.GetProperty("transactions").GetInt64();
    }
}

/// <summary>A test that runs Debian's siege, the load tool of the SQL article.</summary>
public sealed class SiegeFactAttribute : FactAttribute
{
    public const string Install = "needs siege on PATH: apt-get install siege";

    public SiegeFactAttribute([CallerMemberName] string test = "") =>
        Requirements.SkipUnless(this, Requirements.OnPath("siege") is not null, Install, test);
}
