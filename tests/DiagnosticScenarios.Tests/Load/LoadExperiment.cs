using System.Globalization;
using System.Reflection;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// One measurement as <c>compare</c> takes it: a fresh server process (cold pool, <c>DOTNET_PROCESSOR_COUNT=2</c>),
/// one warm-up request, then 125 connections from a load-runner process of its own for a bounded time, with the server's thread count
/// sampled and a ping probe alongside.
/// </summary>
internal static class LoadExperiment
{
    public const int Connections = 125;
    public const int DelayMs = 500;

    /// <summary>For comparisons: long enough for the async pattern to settle at its limit while the cold pool of a blocking one has barely grown.</summary>
    public static readonly TimeSpan Duration = TimeSpan.FromSeconds(5);

    /// <summary>
    /// For absolute bounds (p95, share of the limit), as long as compare's default: a half-second stall of a shared machine
    /// delays the 125 requests in flight, 10 % of a 5 s run's answers but 5 % of a 10 s run's, so it cannot decide a p95 alone.
    /// </summary>
    public static readonly TimeSpan SteadyStateDuration = TimeSpan.FromSeconds(10);

    /// <summary>
    /// A request unanswered after this long counts as a timeout, and the run waits no longer for requests in flight:
    /// every measurement ends within 5 + 3 s. Six delays: an answer that late is starvation, not noise.
    /// </summary>
    public static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(3);

    /// <summary>Start, warm-up, load, drain and stop, with room for a loaded CI machine.</summary>
    public static readonly TimeSpan MeasurementTimeout = TimeSpan.FromSeconds(60);

    public static string AppPath { get; } = typeof(LoadExperiment).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "DiagnosticScenariosAppPath").Value!;

    public static string Mock { get; } = ScenarioCatalogue.Mock.Name;

    /// <summary>Physical limit of the closed loop: every connection busy with one query at a time.</summary>
    public static double LimitRequestsPerSecond => Connections * 1000.0 / DelayMs;

    public static async Task<ScenarioResult> MeasureAsync(string scenario, ITestOutputHelper output, int? minWorkerThreads = null, TimeSpan? duration = null)
    {
        var options = new ComparisonOptions
        {
            AppPath = AppPath,
            Family = Mock,
            Connections = Connections,
            Duration = duration ?? Duration,
            Timeout = RequestTimeout,
            ProcessorCount = 2,
            MinWorkerThreads = minWorkerThreads,
            DelayMs = DelayMs,
        };
        var result = await RunnerProcess.MeasureAsync(options, scenario, MeasurementTimeout);
        output.WriteLine(Describe(result));
        return result;
    }

    /// <summary>Starts a fresh server for a test that sends its own requests.</summary>
    public static Task<ServerProcess> StartServerAsync() =>
        ServerProcess.StartAsync(new ServerOptions { AppPath = AppPath, ProcessorCount = 2 }).WaitAsync(MeasurementTimeout);

    /// <summary>Every figure an assertion may use, so a failure on CI can be read without a rerun.</summary>
    public static string Describe(ScenarioResult r) => Describe(r, LimitRequestsPerSecond);

    /// <summary>The same figures against another family's limit (the SQL family: 120 connections, 1 s).</summary>
    public static string Describe(ScenarioResult r, double limitRequestsPerSecond)
    {
        var l = r.Load;
        return string.Create(CultureInfo.InvariantCulture,
            $"{r.Scenario}{(r.Verdict == Verdict.Good ? " (GOOD)" : " (BAD)")}: {l.RequestsPerSecond:0.0} req/s ({l.RequestsPerSecond / limitRequestsPerSecond:P0} of {limitRequestsPerSecond:0}), " +
            $"answered {l.Completed}/{l.Sent}, latency avg {l.Latency.Average:0} p50 {l.Latency.P50:0} p95 {l.Latency.P95:0} max {l.Latency.Max:0} ms, " +
            $"at-least p50 {l.LatencyAtLeast.P50:0} p95 {l.LatencyAtLeast.P95:0} ms, failures {l.Failures} (timeouts {l.Timeouts}), " +
            $"ping p50 {r.Ping.LatencyAtLeast.P50:0.0} ms, threads peak {r.PeakThreads} end {r.ThreadsAtEnd}, elapsed {l.Elapsed.TotalSeconds:0.0} s, " +
            $"avg ms per second [{string.Join(' ', l.Timeline.Select(p => p.AverageMs.ToString("0", CultureInfo.InvariantCulture)))}], load average {LoadAverage()}");
    }

    /// <summary>
    /// The machine's load average (Linux): a p95 bound can only fail on a 2-core machine when something else takes the
    /// cores, and the message should say whether something did.
    /// </summary>
    private static string LoadAverage() =>
        File.Exists("/proc/loadavg") ? string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3)) : "n/a";

    public static string Describe(LoadReport report) => RunSummary.Render(report);
}
