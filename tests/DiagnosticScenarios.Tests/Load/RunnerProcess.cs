using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.LoadRunner.Compare;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// Takes one measurement with the load runner's <c>compare</c> in a process of its own, as a user would. The load then
/// shares nothing with the test host (its thread pool, its heap and the apps earlier tests started in it): a GC pause
/// or a pool hiccup there once stalled the in-process load generator for half a second mid-run.
/// </summary>
/// <remarks>
/// Asked for, it records a stack snapshot of the server some time into the load, and analyses it only once the runner
/// has exited: recording costs the server a few milliseconds of sampling and a rundown, while the analysis would take
/// a core of the two the load is measured on for a second or more.
/// </remarks>
internal static partial class RunnerProcess
{
    private static readonly string RunnerPath = Path.Combine(AppContext.BaseDirectory, "DiagnosticScenarios.LoadRunner.dll");

    public static async Task<Measurement> MeasureAsync(ComparisonOptions options, string scenario, TimeSpan? snapshotAfter, TimeSpan timeout)
    {
        var output = Directory.CreateTempSubdirectory("diagnosticscenarios-compare-");
        try
        {
            using var runner = Process.Start(StartInfo(options, scenario, output.FullName))
                ?? throw new InvalidOperationException("dotnet did not start the load runner.");
            var stdout = runner.StandardOutput.ReadToEndAsync();
            var log = new StringBuilder();
            int? serverProcessId = null;
            Task<TimeSpan>? recording = null;
            var trace = Path.Combine(output.FullName, "stacks.nettrace");
            var finished = Task.Run(async () =>
            {
                while (await runner.StandardError.ReadLineAsync() is { } line)
                {
                    log.AppendLine(line);
                    if (LoadingServer().Match(line) is { Success: true } loading)
                    {
                        // The load is on from here until the runner exits: the place for anything to do meanwhile.
                        serverProcessId = int.Parse(loading.Groups[1].Value, CultureInfo.InvariantCulture);
                        if (snapshotAfter is { } after)
                        {
                            recording = BlockedStacks.RecordAsync(serverProcessId.Value, after, trace);
                        }
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
            return new Measurement(result.Results.Single(), snapshotAfter is null ? null : await SnapshotAsync(recording, trace, timeout));
        }
        finally
        {
            output.Delete(recursive: true);
        }
    }

    // A snapshot that could not be taken fails the tests that read it, not the load figures measured beside it.
    private static async Task<Task<StackSnapshot>> SnapshotAsync(Task<TimeSpan>? recording, string trace, TimeSpan timeout)
    {
        if (recording is null)
        {
            return Task.FromException<StackSnapshot>(new InvalidOperationException("The runner never said which server it loaded, so no snapshot was recorded."));
        }

        try
        {
            var recorded = await recording.WaitAsync(timeout);
            return Task.FromResult(await BlockedStacks.AnalyzeAsync(trace, recorded).WaitAsync(timeout));
        }
        catch (Exception e) when (e is DiagnosisException or TimeoutException)
        {
            return Task.FromException<StackSnapshot>(e);
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

/// <summary>One scenario's figures, and the stack snapshot taken during its load when one was asked for (faulted when it could not be taken).</summary>
internal sealed record Measurement(ScenarioResult Result, Task<StackSnapshot>? Snapshot);
