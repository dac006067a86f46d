using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Cli;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// The commands the README and docs/load-testing.md show, run for real on short loads. What <c>compare</c> prints and
/// writes is checked on the comparison the starvation tests measure with it (StarvationLoadTests).
/// </summary>
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class LoadToolingTests
{
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
}
