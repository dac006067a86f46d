using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using DiagnosticScenarios.LoadRunner.Compare;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// Takes one measurement with the load runner's <c>compare</c> in a process of its own, as a user would. The load then
/// shares nothing with the test host (its thread pool, its heap and the apps earlier tests started in it): a GC pause
/// or a pool hiccup there once stalled the in-process load generator for half a second mid-run.
/// </summary>
internal static partial class RunnerProcess
{
    private static readonly string RunnerPath = Path.Combine(AppContext.BaseDirectory, "DiagnosticScenarios.LoadRunner.dll");

    public static async Task<ScenarioResult> MeasureAsync(ComparisonOptions options, string scenario, TimeSpan timeout)
    {
        var output = Directory.CreateTempSubdirectory("diagnosticscenarios-compare-");
        try
        {
            using var runner = Process.Start(StartInfo(options, scenario, output.FullName))
                ?? throw new InvalidOperationException("dotnet did not start the load runner.");
            var stdout = runner.StandardOutput.ReadToEndAsync();
            var log = new StringBuilder();
            int? serverProcessId = null;
            var finished = Task.Run(async () =>
            {
                while (await runner.StandardError.ReadLineAsync() is { } line)
                {
                    log.AppendLine(line);
                    if (LoadingServer().Match(line) is { Success: true } loading)
                    {
                        // The load is on from here until the runner exits: the place for anything to do meanwhile.
                        serverProcessId = int.Parse(loading.Groups[1].Value, CultureInfo.InvariantCulture);
                    }
                }

                await runner.WaitForExitAsync();
            });
            try
            {
                await finished.WaitAsync(timeout);
            }
            catch (TimeoutException)
            {
                // The runner's server is its child: the whole tree goes.
                runner.Kill(entireProcessTree: true);
                throw new TimeoutException($"compare --scenarios {scenario} (server pid {serverProcessId?.ToString(CultureInfo.InvariantCulture) ?? "not started"}) did not finish within {timeout}:\n{log}");
            }

            if (runner.ExitCode != 0)
            {
                throw new InvalidOperationException($"compare --scenarios {scenario} exited with {runner.ExitCode}:\n{await stdout}\n{log}");
            }

            await using var json = File.OpenRead(Path.Combine(output.FullName, "compare.json"));
            var result = await JsonSerializer.DeserializeAsync<ComparisonResult>(json, CompareJson.Options).AsTask().WaitAsync(timeout)
                ?? throw new InvalidOperationException("compare.json was empty.");
            return result.Results.Single();
        }
        finally
        {
            output.Delete(recursive: true);
        }
    }

    private static ProcessStartInfo StartInfo(ComparisonOptions options, string scenario, string outDirectory)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        string[] arguments =
        [
            RunnerPath, "compare",
            "--app", options.AppPath,
            "--family", options.Family,
            "--scenarios", scenario,
            "-c", Invariant(options.Connections),
            "-d", $"{Invariant(options.Duration.TotalMilliseconds)}ms",
            "--timeout", $"{Invariant(options.Timeout.TotalMilliseconds)}ms",
            "--cpus", Invariant(options.ProcessorCount),
            "--out", outDirectory,
        ];
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        if (options.MinWorkerThreads is { } minThreads)
        {
            start.ArgumentList.Add("--min-threads");
            start.ArgumentList.Add(Invariant(minThreads));
        }

        if (options.DelayMs is { } delayMs)
        {
            start.ArgumentList.Add("--delay-ms");
            start.ArgumentList.Add(Invariant(delayMs));
        }

        foreach (var (key, value) in options.Environment)
        {
            start.ArgumentList.Add("--env");
            start.ArgumentList.Add($"{key}={value}");
        }

        return start;
    }

    [GeneratedRegex(@": loading server pid (\d+)$")]
    private static partial Regex LoadingServer();

    private static string Invariant(double value) => value.ToString(CultureInfo.InvariantCulture);
}
