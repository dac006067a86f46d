using System.Text.RegularExpressions;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.LoadRunner;

/// <summary>
/// A comparison that cannot measure what it was asked to exits with code 1 and says why in a line of its own, never a
/// stack trace. Each starts real servers, so these run as a class of their own beside the command-line checks.
/// </summary>
[StartsNext("comparisons that start real servers and the runner: 5–12 s")]
public sealed class CompareFailureTests
{
    // Two comparisons that cannot measure anything, each on a real server: one whose database is down (port 1 refuses), so the
    // scenario answers its warm-up with the 503 naming the database; one whose server refuses its settings at start.
    [Theory]
    [InlineData("Database__Provider=PostgreSql", "ConnectionStrings__PostgreSql=Host=127.0.0.1;Port=1;Username=nobody;Password=none;Database=none;Timeout=2",
        "The warm-up request GET /api/sqlscenario/async?delayMs=1000 answered 503 Service Unavailable", "The PostgreSql database is not available.")]
    [InlineData("Database__Provider=Embedded", "Database__WarmUpConnections=100000", "The server exited with code", "'WarmUpConnections' with the error")]
    public async Task Compare_SaysWhyAndExitsWithCode1_WhenAScenarioCannotBeMeasured(string setting, string otherSetting, string why, string naming)
    {
        var outFolder = Path.Combine(Path.GetTempPath(), $"compare-never-written-{Guid.NewGuid():N}");
        string[] args = ["compare", "--family", "sql", "--scenarios", "async", "--app", LoadExperiment.AppPath, "-d", "1s",
            "--env", setting, "--env", otherSetting, "--out", outFolder];

        var (exitCode, output, error) = await CommandLineTests.RunAsync(args);

        Assert.True(exitCode == 1, $"exit {exitCode}\n{error}");
        // A line of the runner's own; after it, the server's output where the server said why.
        Assert.Contains(error.Split('\n'), line => line.StartsWith(why, StringComparison.Ordinal));
        Assert.Contains(naming, error, StringComparison.Ordinal);
        Assert.DoesNotContain("at DiagnosticScenarios.LoadRunner.", error, StringComparison.Ordinal);
        Assert.DoesNotContain("Usage:", error, StringComparison.Ordinal);
        Assert.DoesNotContain("loading server pid", output, StringComparison.Ordinal);
        // The folder, made before the measurement so that a long one cannot end with nowhere to write, is not left empty.
        Assert.False(Directory.Exists(outFolder), $"{outFolder} was left behind");
    }

    [Fact]
    public async Task Compare_WhoseOutIsAFile_IsRefusedBeforeAnyServerStarts_WithExitCode2()
    {
        var file = Path.GetTempFileName();
        try
        {
            var (exitCode, output, error) = await CommandLineTests.RunAsync(["compare", "--family", "mock", "--app", LoadExperiment.AppPath, "--out", file]);

            Assert.True(exitCode == 2, $"exit {exitCode}\n{error}");
            Assert.StartsWith($"--out {file} cannot be a folder for the files", error, StringComparison.Ordinal);
            Assert.DoesNotContain("app: ", error, StringComparison.Ordinal);
            Assert.Empty(output);
        }
        finally
        {
            File.Delete(file);
        }
    }

    // A --timeout shorter than any answer (a microsecond: the runner's client gives up at once): the server is ready, and
    // its catalogue, the first thing the runner reads, cannot come in time. One line, no stack trace.
    [Fact]
    public async Task Compare_WhoseTimeoutNoAnswerCanMeet_SaysItCouldNotReadTheCatalogue_AndExitsWithCode1()
    {
        string[] args = ["compare", "--family", "mock", "--scenarios", "taskasyncwait", "--app", LoadExperiment.AppPath, "-d", "1s",
            "--timeout", "0.001ms", "--out", Path.Combine(Path.GetTempPath(), $"compare-never-written-{Guid.NewGuid():N}")];

        var (exitCode, _, error) = await CommandLineTests.RunAsync(args);

        Assert.True(exitCode == 1, $"exit {exitCode}\n{error}");
        Assert.Contains(error.Split('\n'), line => line.StartsWith("Could not read the app's catalogue at http://127.0.0.1:", StringComparison.Ordinal));
        Assert.DoesNotContain("   at ", error, StringComparison.Ordinal);
    }

    // A server started without its diagnostic port: --diagnose can open no session on it, and says why in a line of its own.
    [Fact]
    public async Task CompareDiagnose_SaysTheServerHasNoDiagnosticPort_AndExitsWithCode1()
    {
        string[] args = ["compare", "--family", "mock", "--scenarios", "taskasyncwait", "--app", LoadExperiment.AppPath, "-c", "2", "-d", "1s",
            "--diagnose", "--env", "DOTNET_EnableDiagnostics=0", "--out", Path.Combine(Path.GetTempPath(), $"compare-never-written-{Guid.NewGuid():N}")];

        var (exitCode, _, error) = await CommandLineTests.RunAsync(args);

        Assert.True(exitCode == 1, $"exit {exitCode}\n{error}");
        Assert.True(Regex.IsMatch(error, "(?m)^Process [0-9]+ \\(DiagnosticScenarios\\) publishes no \\.NET diagnostic port\\b.*DOTNET_EnableDiagnostics=0"), error);
        Assert.DoesNotContain("   at ", error, StringComparison.Ordinal);
    }
}
