using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.Scenarios.Catalogue;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Controls;

/// <summary>The launcher's state follows the runner whatever happens to it, so a failed run never blocks the next one.</summary>
/// <remarks>The stand-in runners are shell scripts, as on the Linux CI.</remarks>
[StartsNext("stand-in runners started and ended as processes: 4–5 s")]
[System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
public sealed class LoadRunLauncherTests : IDisposable
{
    private readonly string _folder = Directory.CreateTempSubdirectory("load-runner-").FullName;

    [Fact]
    public async Task Run_EndsAndANewOneStarts_WhenTheRunnerExitsButSomethingItStartedHoldsItsOutput()
    {
        // The runner exits at once; the sleep it left behind keeps stdout open for 20 s.
        using var launcher = LauncherFor("sleep 20 &\necho '{}'\nexit 0\n");

        var (first, started) = launcher.Start("diagscenario/ping", new Uri("http://127.0.0.1:1/api/diagscenario/ping"), 1, 1);
        var finished = await WaitUntilFinishedAsync(launcher, TimeSpan.FromSeconds(10));
        var (_, startedAgain) = launcher.Start("diagscenario/ping", new Uri("http://127.0.0.1:1/api/diagscenario/ping"), 1, 1);

        Assert.True(started);
        Assert.True(finished is { Running: false }, $"The run of process {first.ProcessId} still counts as running 10 s after the runner exited.");
        Assert.Equal(0, finished!.ExitCode);
        Assert.True(startedAgain);
    }

    [Fact]
    public async Task Run_EndsWithTheRunnersExitCode_WhenTheRunnerFails()
    {
        using var launcher = LauncherFor("echo 'unhandled' >&2\nexit 134\n");

        launcher.Start("diagscenario/ping", new Uri("http://127.0.0.1:1/api/diagscenario/ping"), 1, 1);
        var finished = await WaitUntilFinishedAsync(launcher, TimeSpan.FromSeconds(10));

        Assert.True(finished is { Running: false }, "The failed run still counts as running 10 s after the runner exited.");
        Assert.Equal(134, finished!.ExitCode);
        Assert.Contains("unhandled", finished.Error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("blocking/bodyread", true)]
    [InlineData("blocking/channel", false)]
    public async Task Run_LoadsAScenario_WithTheMethodAndSlowUploadItsCatalogueEntryGives(string scenario, bool takesABody)
    {
        // The stand-in runner answers its own command line as its report.
        using var launcher = LauncherFor("printf '{\"args\":\"%s\"}' \"$*\"\nexit 0\n");
        var load = ScenarioCatalogue.Loadable.Single(s => s.Route == "/api/" + scenario).Load;

        launcher.Start(scenario, new Uri($"http://127.0.0.1:1/api/{scenario}"), 1, 1);
        var finished = await WaitUntilFinishedAsync(launcher, TimeSpan.FromSeconds(10));

        Assert.True(finished is { Running: false, ExitCode: 0 }, $"the stand-in runner did not finish: {finished}");
        var args = finished!.Result?.GetProperty("args").GetString();
        Assert.NotNull(args);
        Assert.Equal(takesABody, load is not null);
        if (load is not null)
        {
            Assert.Contains($"--method {load.Method} --body-bytes {load.BodyBytes} --upload-over {load.UploadMs}ms", args, StringComparison.Ordinal);
        }
        else
        {
            Assert.DoesNotContain("--method", args, StringComparison.Ordinal);
        }
    }

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private LoadRunLauncher LauncherFor(string script)
    {
        var path = Path.Combine(_folder, "runner.sh");
        File.WriteAllText(path, "#!/bin/sh\n" + script);
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { ["LoadRunner:Path"] = path }).Build();
        return new LoadRunLauncher(configuration, NullLogger<LoadRunLauncher>.Instance);
    }

    private static async Task<LoadRun?> WaitUntilFinishedAsync(LoadRunLauncher launcher, TimeSpan patience)
    {
        await Poll.UntilAsync(() => launcher.Current is not { Running: true }, patience);
        return launcher.Current;
    }
}
