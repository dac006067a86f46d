using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Cli;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>The commands the README and docs/load-testing.md show, run for real on short loads.</summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class LoadToolingTests : IDisposable
{
    // Two scenarios, each a fresh server, a warm-up and a two-second load, on a machine the load tests have to themselves.
    private static readonly TimeSpan CompareTimeout = TimeSpan.FromSeconds(90);
    private readonly string _out = Directory.CreateTempSubdirectory("compare-").FullName;

    [Fact]
    public async Task CompareCommand_WritesTableMarkdownJsonAndChart_ForEachScenario()
    {
        using var output = new StringWriter();
        using var error = new StringWriter();

        var exitCode = await CommandLine.RunAsync(
            ["compare", "--scenarios", "taskasyncwait,taskwait", "-c", "20", "-d", "2s", "--timeout", "5s", "--app", LoadExperiment.AppPath, "--out", _out],
            output, error).TimeoutAfter(CompareTimeout);

        Assert.True(exitCode == 0, error.ToString());
        Assert.Contains("| taskasyncwait | GOOD |", output.ToString(), StringComparison.Ordinal);
        Assert.Contains("| taskwait | BAD |", output.ToString(), StringComparison.Ordinal);
        Assert.Contains("![", await File.ReadAllTextAsync(Path.Combine(_out, "compare.md")).DefaultTimeout(), StringComparison.Ordinal);
        var svg = await File.ReadAllTextAsync(Path.Combine(_out, "compare.svg")).DefaultTimeout();
        Assert.Contains("<polyline", svg, StringComparison.Ordinal);
        Assert.Contains("taskasyncwait (GOOD)", svg, StringComparison.Ordinal);
        Assert.Contains("taskwait (BAD)", svg, StringComparison.Ordinal);
        using var json = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(_out, "compare.json")).DefaultTimeout());
        var results = json.RootElement.GetProperty("results");
        Assert.Equal(2, results.GetArrayLength());
        // The sampler always takes one sample when it starts and one when it stops; once a second in between, the two
        // seconds of load leave no gap longer than a second and a half (a late wake-up on a busy machine).
        Assert.All(results.EnumerateArray(), r =>
        {
            var seconds = r.GetProperty("threads").EnumerateArray().Select(t => t.GetProperty("seconds").GetDouble()).ToList();
            var gaps = seconds.Zip(seconds.Skip(1), (a, b) => b - a).ToList();
            Assert.True(seconds.Count >= 3 && gaps.Max() <= 1.5, $"thread count sampled at {string.Join(", ", seconds.Select(s => s.ToString("0.00", CultureInfo.InvariantCulture)))} s");
        });
    }

    [Fact]
    public async Task LoadScript_LoadsARunningServer_WithAnInstalledTool()
    {
        // hey is one of the tools .ci/run installs, so under CI it must be there (a missing hey fails the test); elsewhere the
        // script's own fallback, the load runner, stands in.
        var tool = Requirements.IsCi || Requirements.OnPath("hey") is not null ? "hey" : "runner";
        await using var server = await LoadExperiment.StartServerAsync();
        var script = Path.Combine(RepositoryPaths.Root, "scripts", "load.sh");
        var run = await ChildProcess.RunAsync(
            new ChildProcessStart("bash", [script, "taskasyncwait", "10", "1s"])
            {
                WorkingDirectory = Path.GetTempPath(),
                Environment = new Dictionary<string, string?> { ["BASE_URL"] = server.BaseAddress.ToString().TrimEnd('/'), ["LOAD_TOOL"] = tool },
            },
            TimeoutExtensions.Default);

        var text = $"{run.Output}\n{run.Error}";
        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains(tool == "hey" ? "[200]" : "200 - ", text, StringComparison.Ordinal);
    }

    public void Dispose() => Directory.Delete(_out, recursive: true);
}
