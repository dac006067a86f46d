using System.Text.RegularExpressions;
using DiagnosticScenarios.LoadRunner.Cli;
using DiagnosticScenarios.Tests.Load;

namespace DiagnosticScenarios.Tests.RunnerCli;

/// <summary>The load runner answers every wrong command line with the errors, the usage and exit code 2, never a stack trace.</summary>
public sealed class CommandLineTests
{
    [Theory]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--connectoins", "5")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "-c", "abc")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "-c", "0")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "-c", "99999999999")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "-d", "soon")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--rate", "0")]
    [InlineData("run", "--url", "not-a-url")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--upload-over", "1s")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--method", "P0ST")]
    [InlineData("run", "--url", "http://127.0.0.1:9/", "--body-bytes", "-1")]
    [InlineData("run", "-c", "5")]
    [InlineData("compare", "--cpus", "-1")]
    [InlineData("compare", "--delay-ms", "60001")]
    [InlineData("compare", "--env", "NO_EQUALS_SIGN")]
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
    [InlineData("--family", "tutorial")]
    [InlineData("--scenarios", "taskwait,nosuch")]
    [InlineData("--family", "sql", "--scenarios", "taskwait")]
    public async Task Compare_AnswersUsageAndExitCode2_ForAFamilyOrScenarioTheAppDoesNotServe(params string[] selection)
    {
        string[] args = ["compare", .. selection, "--app", LoadExperiment.AppPath, "-d", "1s", "--out", Path.Combine(Path.GetTempPath(), "never-written")];

        var (exitCode, output, error) = await RunAsync(args);

        Assert.True(exitCode == 2, $"exit {exitCode}\n{error}");
        Assert.Matches("Unknown family '[a-z]+'; known: mock, sql, blocking\\.|has no scenario '[a-z]+'; known: ", error);
        AssertUsageWithoutStackTrace(error);
        Assert.Empty(output);
    }

    // Two comparisons that cannot measure anything, each on a real server: one whose database is down (port 1 refuses), so the
    // scenario answers its warm-up with the 503 naming the database; one whose server refuses its settings at start.
    [Theory]
    [InlineData("Database__Provider=PostgreSql", "ConnectionStrings__PostgreSql=Host=127.0.0.1;Port=1;Username=nobody;Password=none;Database=none;Timeout=2",
        "The warm-up request GET /api/sqlscenario/async?delayMs=1000 answered 503 Service Unavailable", "The PostgreSql database is not available.")]
    [InlineData("Database__Provider=Embedded", "Database__WarmUpConnections=100000", "The server exited with code", "'WarmUpConnections' with the error")]
    public async Task Compare_SaysWhyAndExitsWithCode1_WhenAScenarioCannotBeMeasured(string setting, string otherSetting, string why, string naming)
    {
        string[] args = ["compare", "--family", "sql", "--scenarios", "async", "--app", LoadExperiment.AppPath, "-d", "1s",
            "--env", setting, "--env", otherSetting, "--out", Path.Combine(Path.GetTempPath(), "never-written")];

        var (exitCode, output, error) = await RunAsync(args);

        Assert.True(exitCode == 1, $"exit {exitCode}\n{error}");
        // A line of the runner's own; after it, the server's output where the server said why.
        Assert.Contains(error.Split('\n'), line => line.StartsWith(why, StringComparison.Ordinal));
        Assert.Contains(naming, error, StringComparison.Ordinal);
        Assert.DoesNotContain("at DiagnosticScenarios.LoadRunner.", error, StringComparison.Ordinal);
        Assert.DoesNotContain("Usage:", error, StringComparison.Ordinal);
        Assert.DoesNotContain("loading server pid", output, StringComparison.Ordinal);
    }

    // A server started without its diagnostic port: --diagnose can open no session on it, and says why in a line of its own.
    [Fact]
    public async Task CompareDiagnose_SaysTheServerHasNoDiagnosticPort_AndExitsWithCode1()
    {
        string[] args = ["compare", "--family", "mock", "--scenarios", "taskasyncwait", "--app", LoadExperiment.AppPath, "-c", "2", "-d", "1s",
            "--diagnose", "--env", "DOTNET_EnableDiagnostics=0", "--out", Path.Combine(Path.GetTempPath(), "never-written")];

        var (exitCode, _, error) = await RunAsync(args);

        Assert.True(exitCode == 1, $"exit {exitCode}\n{error}");
        Assert.True(Regex.IsMatch(error, "(?m)^Process [0-9]+ \\(DiagnosticScenarios\\) publishes no \\.NET diagnostic port\\b.*DOTNET_EnableDiagnostics=0"), error);
        Assert.DoesNotContain("   at ", error, StringComparison.Ordinal);
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

    private static async Task<(int ExitCode, string Output, string Error)> RunAsync(string[] args)
    {
        using var output = new StringWriter();
        using var error = new StringWriter();
        var exitCode = await CommandLine.RunAsync(args, output, error).DefaultTimeout();
        return (exitCode, output.ToString(), error.ToString());
    }
}
