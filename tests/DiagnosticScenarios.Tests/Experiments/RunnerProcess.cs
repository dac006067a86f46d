using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Compare;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// Takes one measurement with the load runner's <c>compare</c> in a process of its own, as a user would. The load then
/// shares nothing with the test host (its thread pool, its heap and the apps earlier tests started in it), where a GC
/// pause or a pool hiccup could stall an in-process load generator mid-run.
/// </summary>
/// <remarks>
/// Asked for a snapshot or waits, it runs <c>compare --diagnose</c>: the runner records a stack snapshot of its server some
/// time into the load and a trace of its waits over the load, and analyses them only once the load is over, before it
/// exits; recording costs the server a few milliseconds of sampling and a rundown, while the analysis would take a core of
/// the two the load is measured on for a second or more. Everything comes back as data, in compare.json.
/// </remarks>
internal static class RunnerProcess
{
    private static readonly string RunnerPath = Path.Combine(AppContext.BaseDirectory, "DiagnosticScenarios.LoadRunner.dll");

    /// <summary>Each of <paramref name="scenarios"/> measured in turn by one <c>compare</c>, each on a fresh server of its own.</summary>
    public static async Task<IReadOnlyDictionary<string, Measurement>> MeasureAsync(ComparisonOptions options, IReadOnlyList<string> scenarios, TimeSpan timeout)
    {
        var output = Directory.CreateTempSubdirectory("diagnosticscenarios-compare-");
        try
        {
            var run = await ChildProcess.RunAsync(new ChildProcessStart("dotnet", Arguments(options, string.Join(',', scenarios), output.FullName)), timeout);
            if (run.ExitCode != 0)
            {
                throw new InvalidOperationException(run.ToString());
            }

            var files = new ComparisonOutput(
                run.Output,
                await File.ReadAllTextAsync(Path.Combine(output.FullName, "compare.md")).TimeoutAfter(timeout),
                await File.ReadAllTextAsync(Path.Combine(output.FullName, "compare.json")).TimeoutAfter(timeout),
                await File.ReadAllTextAsync(Path.Combine(output.FullName, "compare.svg")).TimeoutAfter(timeout));
            var result = JsonSerializer.Deserialize<ComparisonResult>(files.Json, CompareJson.Options)
                ?? throw new InvalidOperationException("compare.json was empty.");
            return result.Results.ToDictionary(r => r.Scenario, r => new Measurement(r, r.Diagnosis, files), StringComparer.Ordinal);
        }
        finally
        {
            output.Delete(recursive: true);
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
        if (options.Drain is { } drain)
        {
            arguments.AddRange(["--drain", $"{Invariant(drain.TotalMilliseconds)}ms"]);
        }

        if (options.MinWorkerThreads is { } minThreads)
        {
            arguments.AddRange(["--min-threads", Invariant(minThreads)]);
        }

        if (options.Diagnose)
        {
            arguments.Add("--diagnose");
            if (options.SnapshotAfter is { } after)
            {
                arguments.AddRange(["--snapshot-after", $"{Invariant(after.TotalMilliseconds)}ms"]);
            }
        }

        if (options.ThinkTime is { } think)
        {
            arguments.AddRange(["--think-time", $"{Invariant(think.TotalMilliseconds)}ms"]);
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

    private static string Invariant(double value) => value.ToString(CultureInfo.InvariantCulture);
}

/// <summary>
/// One scenario's figures, what <c>compare --diagnose</c> saw of its server under the load when it was asked for, and what
/// the <c>compare</c> that measured it printed and wrote.
/// </summary>
internal sealed record Measurement(ScenarioResult Result, ScenarioDiagnosis? Diagnosis, ComparisonOutput Output);

/// <summary>What one <c>compare</c> printed on standard output, and the three files it wrote into <c>--out</c>.</summary>
internal sealed record ComparisonOutput(string Table, string Markdown, string Json, string Svg);
