using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Cli;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.LoadRunner;

/// <summary>The load runner answers every wrong command line with the errors, the usage and exit code 2, never a stack trace.</summary>
[StartsNext("the runner started as a process of its own for each of 22 command lines: 5–15 s")]
public sealed class CommandLineTests
{
    [Theory]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--connectoins", "5")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "-c", "abc")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "-c", "0")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "-c", "99999999999")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--rate", "0")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--rate", "10", "--think-time", "1s")]
    [InlineData("run", "--url", "not-a-url")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--upload-over", "1s")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--upload-over", "soon", "--body-bytes", "5")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--upload-over", "1s", "--body-bytes", "-5")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--method", "P0ST")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--body-bytes", "-1")]
    [InlineData("run", "-c", "5")]
    [InlineData("compare", "--cpus", "-1")]
    [InlineData("compare", "--delay-ms", "60001")]
    [InlineData("compare", "--env", "NO_EQUALS_SIGN")]
    [InlineData("compare", "--env", "A=1", "--env", "A=2")]
    [InlineData("compare", "--app", "/nonexistent/DiagnosticScenarios.dll")]
    [InlineData("render", "--from", "/nonexistent/compare.json")]
    [InlineData("bench")]
    [InlineData]
    public async Task BadArguments_AnswerUsageOnStderrAndExitCode2(params string[] args)
    {
        var (exitCode, output, error) = await RunAsync(args);

        Assert.True(exitCode == 2, $"exit {exitCode}\n{error}");
        AssertUsageWithoutStackTrace(error);
        Assert.Empty(output);
    }

    [Theory]
    [InlineData("--family", "nosuch")]
    [InlineData("--scenarios", "taskwait,nosuch")]
    [InlineData("--family", "sql", "--scenarios", "taskwait")]
    public async Task Compare_AnswersUsageAndExitCode2_ForAFamilyOrScenarioTheAppDoesNotServe(params string[] selection)
    {
        string[] args = ["compare", .. selection, "--app", LoadExperiment.AppPath, "-d", "1s", "--out", Path.Combine(Path.GetTempPath(), $"compare-never-written-{Guid.NewGuid():N}")];

        var (exitCode, output, error) = await RunAsync(args);

        Assert.True(exitCode == 2, $"exit {exitCode}\n{error}");
        Assert.Matches("Unknown family '[a-z]+'; known: mock, sql, blocking\\.|has no scenario '[a-z]+'; known: ", error);
        AssertUsageWithoutStackTrace(error);
        Assert.Empty(output);
    }

    [Fact]
    public async Task Run_PrintsItsReport_ThenSaysNothingAnswered_AndExitsWithCode1_WhenNothingListensAtTheUrl()
    {
        var url = $"http://127.0.0.1:{FreeLoopbackPort.Pick()}/api/diagscenario/ping";

        var (exitCode, output, error) = await RunAsync(["run", "--url", url, "-c", "2", "-n", "20"]);

        Assert.True(exitCode == 1, $"exit {exitCode}\n{output}\n{error}");
        Assert.Contains("sent 20, answered 0", output, StringComparison.Ordinal);
        Assert.StartsWith($"Nothing answered at {url}: every request failed before an answer (ConnectionError × 20).", error, StringComparison.Ordinal);
    }

    [Fact]
    public void NothingListened_SaysNothing_WhenEveryRequestTimedOut_ForThatIsAStarvedServerMeasured_AndAsksWhetherAnAppListensOnlyWhenRefused()
    {
        var starved = new LoadReport
        {
            Url = new Uri("http://127.0.0.1:5000/api/diagscenario/tasksleepwait"),
            Connections = 125,
            Elapsed = TimeSpan.FromSeconds(10),
            Sent = 125,
            Completed = 0,
            RequestsPerSecond = 0,
            Latency = LatencySummary.Empty,
            LatencyAtLeast = LatencySummary.Empty,
            StatusCodes = new Dictionary<int, long>(),
            Errors = new Dictionary<string, long> { ["ConnectionError"] = 1 },
            Timeouts = 124,
            Unfinished = 0,
            Timeline = [],
        };

        Assert.Null(RunCommand.NothingListened(starved));
        Assert.EndsWith("Is the app listening there? Start it, or give --url the address it listens on.", RunCommand.NothingListened(starved with { Timeouts = 0 }), StringComparison.Ordinal);
        // A TLS handshake that failed reached a server: no question whether one listens.
        var refusedHandshake = starved with { Timeouts = 0, Errors = new Dictionary<string, long> { ["SecureConnectionError"] = 125 } };
        Assert.EndsWith("every request failed before an answer (SecureConnectionError × 125).", RunCommand.NothingListened(refusedHandshake), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Help_AnswersUsageOnStdoutAndExitCode0()
    {
        var (exitCode, output, _) = await RunAsync(["compare", "--help"]);

        Assert.Equal(0, exitCode);
        Assert.Contains("Usage:", output, StringComparison.Ordinal);
        Assert.Contains("--family", output, StringComparison.Ordinal);
    }

    private static void AssertUsageWithoutStackTrace(string error)
    {
        Assert.Contains("Usage:", error, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", error, StringComparison.Ordinal);
        Assert.DoesNotContain("Exception", error, StringComparison.Ordinal);
    }

    /// <summary>The runner's command line, in this process, bounded: its exit code and what it wrote.</summary>
    internal static async Task<(int ExitCode, string Output, string Error)> RunAsync(string[] args)
    {
        using var output = new StringWriter();
        using var error = new StringWriter();
        var exitCode = await CommandLine.RunAsync(args, output, error).DefaultTimeout();
        return (exitCode, output.ToString(), error.ToString());
    }
}
