using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.Scripts;

/// <summary>
/// The commands the README and docs/load-testing.md show, run for real on short loads. What <c>compare</c> prints and
/// writes is checked on the comparison the starvation tests measure with it (StarvationLoadTests).
/// </summary>
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class LoadToolingTests
{
    private static readonly string Script = Path.Combine(RepositoryPaths.Root, "scripts", "load.sh");

    [Fact]
    public async Task LoadScript_LoadsARunningServer_WithAnInstalledTool_AtABaseUrlEndingInASlash_AndRefusesAScenarioTheAppDoesNotHave()
    {
        // hey is one of the tools .ci/run installs, so under CI it must be there (a missing hey fails the test); elsewhere the
        // script's own fallback, the load runner, stands in.
        var tool = Requirements.IsCi || Requirements.OnPath("hey") is not null ? "hey" : "runner";
        await using var server = await LoadExperiment.StartServerAsync();
        var baseUrl = server.BaseAddress.ToString().TrimEnd('/');

        // With the trailing slash a browser's address bar gives: it had made every path //api/..., which the app answers 404.
        var run = await RunScriptAsync(baseUrl + "/", tool, "taskasyncwait", "10", "1s");
        // A name one letter off: the tool would have loaded a 404 for the whole duration.
        var misspelt = await RunScriptAsync(baseUrl, tool, "taskasyncwiat", "10", "1s");

        var text = $"{run.Output}\n{run.Error}";
        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains(tool == "hey" ? "[200]" : "200 - ", text, StringComparison.Ordinal);
        Assert.True(misspelt.ExitCode == 2, misspelt.ToString());
        Assert.Contains($"The app at {baseUrl} has no scenario 'taskasyncwiat' in /api/diagscenario/; it has: taskwait tasksleepwait taskasyncwait", misspelt.Error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task LoadScript_SaysNothingAnswers_AndLoadsNothing_WhenNoAppListensAtBaseUrl()
    {
        var baseUrl = $"http://127.0.0.1:{FreeLoopbackPort.Pick()}";

        var run = await RunScriptAsync(baseUrl, "runner", "taskwait", "10", "1s");

        Assert.True(run.ExitCode == 1, run.ToString());
        Assert.StartsWith($"Nothing answers at {baseUrl}: start the app", run.Error, StringComparison.Ordinal);
        Assert.Empty(run.Output);
    }

    private static Task<ChildProcessResult> RunScriptAsync(string baseUrl, string tool, params string[] arguments) =>
        ChildProcess.RunAsync(
            new ChildProcessStart("bash", [Script, .. arguments])
            {
                WorkingDirectory = Path.GetTempPath(),
                Environment = new Dictionary<string, string?> { ["BASE_URL"] = baseUrl, ["LOAD_TOOL"] = tool },
            },
            TimeoutExtensions.Default);
}
