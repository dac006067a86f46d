using System.Globalization;
using System.Reflection;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Scenarios.Catalogue;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>The mock family's experiment: 125 connections on a 500 ms query, each scenario on a fresh server pinned to two processors.</summary>
internal static class LoadExperiment
{
    public const int Connections = DiagnosticScenarios.Common.ScenarioLimits.DefaultConnections;
    public const int DelayMs = 500;

    /// <summary>
    /// Eight waves of the async pattern at its limit, while the cold pool of a blocking one grows slowly: the mock queries
    /// need no connection, so the async pattern is at its limit from the first wave. Long enough for the starvation rule's
    /// window of counters (<see cref="DiagnosticScenarios.BlockingAnalysis.StarvationRule.WindowSeconds"/>) to be read under
    /// the load, after the first collection, which has no rates.
    /// </summary>
    public static readonly TimeSpan Duration = TimeSpan.FromSeconds(4);

    /// <summary>
    /// How much longer than the sending a load experiment's request timeout is, so that a request unanswered when sending
    /// stops has not timed out yet and no client sends another behind it. The runtime's timers run on a coarser clock than the
    /// runner's Stopwatch: with the two equal, a starved server's first wave can time out just before sending stops, and the
    /// short waits of the requests sent behind it pull the BAD median down.
    /// </summary>
    public static readonly TimeSpan TimeoutAfterSending = TimeSpan.FromSeconds(0.5);

    /// <summary>
    /// A request unanswered after this long counts as a timeout. Five delays: an answer that late is starvation, not noise
    /// (taskasyncwait answers within little more than one delay).
    /// </summary>
    public static readonly TimeSpan RequestTimeout = Duration + TimeoutAfterSending;

    /// <summary>
    /// Once sending stops, the requests in flight get a delay and a half to answer, which the async pattern's last wave
    /// needs, and are then cut off, unfinished: a blocking pattern's time out within it (<see cref="RequestTimeout"/> falls
    /// <see cref="TimeoutAfterSending"/> after sending stops), and the verdict is certain by then. Every measurement ends
    /// within the load and 0.75 s more.
    /// </summary>
    public static readonly TimeSpan Drain = TimeSpan.FromMilliseconds(1.5 * DelayMs);

    /// <summary>
    /// When a stack snapshot of the server is recorded: half-way through the load, when the cold pool's threads have long
    /// reached the scenario's blocking call and the load stays on for the rest of the recording.
    /// </summary>
    public static readonly TimeSpan SnapshotAfter = Duration / 2;

    /// <summary>
    /// The most a ping's median may take under a GOOD scenario's load: about ten times what it takes under taskasyncwait and
    /// lock-async, and a tenth of the mock query's delay, so a ping that waited for anything would show.
    /// </summary>
    public const double PingUnderGoodLoadMs = 50;

    /// <summary>A pool minimum above the connection count: a thread for every blocked request from the start.</summary>
    public const int RescueMinThreads = 200;

    /// <summary>The BAD scenarios measured again with <see cref="RescueMinThreads"/>: one sync-over-async, one synchronous I/O.</summary>
    public static IReadOnlyList<string> RescuedScenarios { get; } = ["taskwait", "syncio"];

    public static string AppPath { get; } = typeof(LoadExperiment).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "DiagnosticScenariosAppPath").Value!;

    public static string Mock { get; } = ScenarioCatalogue.Mock.Name;

    /// <summary>Physical limit of the closed loop: every connection busy with one query at a time.</summary>
    public static double LimitRequestsPerSecond => Connections * 1000.0 / DelayMs;

    /// <summary>Starts a fresh server for a test that sends its own requests.</summary>
    public static Task<ServerProcess> StartServerAsync() => OutOfProcessApp.StartAsync();

    /// <summary>Every figure an assertion may use, so a failure on CI can be read without a rerun.</summary>
    public static string Describe(ScenarioResult r) => Describe(r, LimitRequestsPerSecond);

    /// <summary>The same figures against another family's limit (the SQL family: 120 connections, 1 s).</summary>
    public static string Describe(ScenarioResult r, double limitRequestsPerSecond)
    {
        var l = r.Load;
        return string.Create(CultureInfo.InvariantCulture,
            $"{r.Scenario}{(r.Verdict == ScenarioVerdict.Good ? " (GOOD)" : " (BAD)")}: {l.RequestsPerSecond:0.0} req/s ({l.RequestsPerSecond / limitRequestsPerSecond:P0} of {limitRequestsPerSecond:0}), " +
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

/// <summary>
/// The mock family measured as <c>compare</c> measures it: a fresh server process (cold pool, <c>DOTNET_PROCESSOR_COUNT=2</c>),
/// one warm-up request, then 125 connections from a load-runner process of its own for a bounded time, with the server's
/// thread count sampled and a ping probe alongside.
/// </summary>
public sealed class MockLoadMeasurements : MeasurementCache
{
    protected override ComparisonOptions Options { get; } = new()
    {
        AppPath = LoadExperiment.AppPath,
        Family = LoadExperiment.Mock,
        Connections = LoadExperiment.Connections,
        Duration = LoadExperiment.Duration,
        Timeout = LoadExperiment.RequestTimeout,
        Drain = LoadExperiment.Drain,
        ProcessorCount = 2,
        DelayMs = LoadExperiment.DelayMs,
    };

    protected override TimeSpan? SnapshotAfter => LoadExperiment.SnapshotAfter;

    /// <summary>The family's BAD and GOOD scenarios in one comparison, as <c>compare</c> runs them by default.</summary>
    protected override IEnumerable<IReadOnlyList<string>> Batches => [[.. CatalogueData.Shapes(ScenarioCatalogue.Mock)]];

    /// <summary>The scenarios the raised minimum rescues, in one comparison of their own.</summary>
    protected override IEnumerable<IReadOnlyList<string>> RaisedMinimumBatches => [LoadExperiment.RescuedScenarios];
}
