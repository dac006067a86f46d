using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;
using DiagnosticScenarios.Diagnosis;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.Processes;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// Takes one measurement with the load runner's <c>compare</c> in a process of its own, as a user would. The load then
/// shares nothing with the test host (its thread pool, its heap and the apps earlier tests started in it): a GC pause
/// or a pool hiccup there once stalled the in-process load generator for half a second mid-run.
/// </summary>
/// <remarks>
/// Asked for, it records a stack snapshot of the server some time into the load, and a trace of its waits from the start of
/// the load, and analyses them only once the runner has exited: recording costs the server a few milliseconds of sampling
/// and a rundown, while the analysis would take a core of the two the load is measured on for a second or more.
/// </remarks>
internal static partial class RunnerProcess
{
    private static readonly string RunnerPath = Path.Combine(AppContext.BaseDirectory, "DiagnosticScenarios.LoadRunner.dll");

    public static async Task<Measurement> MeasureAsync(ComparisonOptions options, string scenario, TimeSpan? snapshotAfter, TimeSpan? waitTraceFor, TimeSpan timeout)
    {
        var output = Directory.CreateTempSubdirectory("diagnosticscenarios-compare-");
        try
        {
            int? serverProcessId = null;
            Task<TimeSpan>? recording = null;
            Task? waitRecording = null;
            var trace = Path.Combine(output.FullName, "stacks.nettrace");
            var waitsTrace = Path.Combine(output.FullName, "waits.nettrace");
            ChildProcessResult run;
            try
            {
                run = await ChildProcess.RunAsync(new ChildProcessStart("dotnet", Arguments(options, scenario, output.FullName)) { OnErrorLine = line =>
                {
                    if (LoadingServer().Match(line) is { Success: true } loading)
                    {
                        // The load is on from here until the runner exits: the place for anything to do meanwhile.
                        serverProcessId = int.Parse(loading.Groups[1].Value, CultureInfo.InvariantCulture);
                        if (snapshotAfter is { } after)
                        {
                            recording = BlockedStacks.RecordAsync(serverProcessId.Value, after, trace);
                        }

                        if (waitTraceFor is { } waitsFor)
                        {
                            waitRecording = WaitAnalyzer.RecordOnDedicatedThreadAsync(serverProcessId.Value, waitsFor, waitsTrace);
                        }
                    }
                } }, timeout);
            }
            catch (TimeoutException e)
            {
                // The runner's server is its child: the helper has ended the whole tree.
                throw new TimeoutException($"compare --scenarios {scenario} (server pid {serverProcessId?.ToString(CultureInfo.InvariantCulture) ?? "not started"}): {e.Message}", e);
            }

            if (run.ExitCode != 0)
            {
                throw new InvalidOperationException(run.ToString());
            }

            await using var json = File.OpenRead(Path.Combine(output.FullName, "compare.json"));
            var result = await JsonSerializer.DeserializeAsync<ComparisonResult>(json, CompareJson.Options).AsTask().WaitAsync(timeout)
                ?? throw new InvalidOperationException("compare.json was empty.");
            return new Measurement(
                result.Results.Single(),
                snapshotAfter is null ? null : await SnapshotAsync(recording, trace, timeout),
                waitTraceFor is null ? null : await WaitsAsync(waitRecording, waitsTrace, timeout));
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

    // Like the snapshot: a wait trace that could not be taken fails the tests that read it.
    private static async Task<Task<WaitAnalysis>> WaitsAsync(Task? recording, string trace, TimeSpan timeout)
    {
        if (recording is null)
        {
            return Task.FromException<WaitAnalysis>(new InvalidOperationException("The runner never said which server it loaded, so no wait trace was recorded."));
        }

        try
        {
            await recording.WaitAsync(timeout);
            return Task.FromResult(await Task.Run(() => WaitAnalyzer.Analyze(trace)).WaitAsync(timeout));
        }
        catch (Exception e) when (e is DiagnosisException or TimeoutException)
        {
            return Task.FromException<WaitAnalysis>(e);
        }
    }

    private static List<string> Arguments(ComparisonOptions options, string scenario, string outDirectory)
    {
        List<string> arguments =
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
        if (options.MinWorkerThreads is { } minThreads)
        {
            arguments.AddRange(["--min-threads", Invariant(minThreads)]);
        }

        if (options.DelayMs is { } delayMs)
        {
            arguments.AddRange(["--delay-ms", Invariant(delayMs)]);
        }

        foreach (var (key, value) in options.Environment)
        {
            arguments.AddRange(["--env", $"{key}={value}"]);
        }

        return arguments;
    }

    [GeneratedRegex(@": loading server pid (\d+)$")]
    private static partial Regex LoadingServer();

    private static string Invariant(double value) => value.ToString(CultureInfo.InvariantCulture);
}

/// <summary>
/// One scenario's figures, and the stack snapshot and the wait analysis taken during its load when they were asked for
/// (faulted when they could not be taken).
/// </summary>
internal sealed record Measurement(ScenarioResult Result, Task<StackSnapshot>? Snapshot, Task<WaitAnalysis>? Waits = null);
