using System.Globalization;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.Tests.Load;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Sql;

/// <summary>
/// The SQL article's experiment, out of process: each shape on a fresh server (cold thread pool, cold connection pool,
/// <c>DOTNET_PROCESSOR_COUNT=2</c>), 120 connections, <c>WAITFOR DELAY</c> / <c>pg_sleep</c> of 1 s, measured by the
/// load runner as <c>compare --family sql</c> does. Throughput counts 2xx answers only: a starved sync open that ends
/// in a 503 is not a served request.
/// </summary>
public abstract class SqlLoadMeasurements : IAsyncLifetime
{
    public const int Connections = 120;
    public const int DelayMs = 1000;


    /// <summary>In-flight requests get this long after sending stops; the rest count as timeouts.</summary>
    public static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(10);

    private static readonly TimeSpan MeasurementTimeout = TimeSpan.FromSeconds(120);

    private readonly Dictionary<string, ScenarioResult> _results = [];

    public static double LimitRequestsPerSecond => Connections * 1000.0 / DelayMs;

    public abstract string Provider { get; }

    /// <summary>
    /// How long each shape is loaded. The first second of a cold connection pool opens 120 connections at once; the run
    /// must be long enough that those first answers stay under the 5 % of samples that p95 ignores.
    /// </summary>
    public abstract TimeSpan Duration { get; }

    public ScenarioResult this[string scenario] => _results[scenario];

    public static double SuccessesPerSecond(ScenarioResult result) => result.Load.Successes / result.Load.Elapsed.TotalSeconds;

    public static string Describe(ScenarioResult result) => string.Create(
        CultureInfo.InvariantCulture,
        $"{result.Scenario}: {SuccessesPerSecond(result):0.0} 2xx/s ({SuccessesPerSecond(result) / LimitRequestsPerSecond:P0} of {LimitRequestsPerSecond:0}); ") + LoadExperiment.Describe(result, LimitRequestsPerSecond);

    public async Task InitializeAsync()
    {
        if (!CanMeasure)
        {
            return; // The tests skip visibly, or fail under CI with the reason.
        }

        var family = ScenarioCatalogue.Sql;
        var options = new ComparisonOptions
        {
            AppPath = LoadExperiment.AppPath,
            Family = family.Name,
            Connections = Connections,
            Duration = Duration,
            Timeout = RequestTimeout,
            ProcessorCount = 2,
            DelayMs = DelayMs,
            Environment = ServerEnvironment(),
        };
        foreach (var scenario in ScenarioCatalogue.InFamily(family))
        {
            _results[scenario.Name] = await RunnerProcess.MeasureAsync(options, scenario.Name, MeasurementTimeout);
        }
    }

    public Task DisposeAsync() => Task.CompletedTask;

    protected virtual bool CanMeasure => true;

    protected abstract Dictionary<string, string> ServerEnvironment();
}

public sealed class EmbeddedSqlLoadMeasurements : SqlLoadMeasurements
{
    public override string Provider => "Embedded";

    // At 8 s (960 answers) p95 was 1084 and 1098 ms in 2 runs on a busy machine, then 1799 ms in a clean-clone CI run
    // on an idle one: SqlClient's OpenAsync logs in with blocking I/O (dotnet/SqlClient#979), so the first two waves of
    // a cold connection pool (peak 149 threads) answered up to 1.84 s late, more than the 5 % of samples p95 ignores.
    // At 30 s, as for PostgreSQL, those waves are under 5 % of the answers and p95 measures the steady state.
    public override TimeSpan Duration => TimeSpan.FromSeconds(30);

    protected override Dictionary<string, string> ServerEnvironment() => new() { ["Database__Provider"] = "Embedded" };
}

public sealed class PostgreSqlLoadMeasurements : SqlLoadMeasurements
{
    public override string Provider => "PostgreSql";

    // Each new PostgreSQL connection costs a backend fork and a SCRAM login on both sides: at 8 s the first wave was 13 %
    // of the answers and p95 landed on it (1307–1517 ms in 3 runs); at 30 s it is 3 % (p95 1007 and 1393 ms in 2 runs).
    public override TimeSpan Duration => TimeSpan.FromSeconds(30);

    protected override bool CanMeasure => PostgreSqlEnvironment.ConnectionString is not null;

    protected override Dictionary<string, string> ServerEnvironment() => new()
    {
        ["Database__Provider"] = "PostgreSql",
        ["ConnectionStrings__PostgreSql"] = PostgreSqlEnvironment.RequireConnectionString(),
    };
}

/// <summary>What must hold for either provider; each provider's class measures once and asserts per shape.</summary>
public abstract class SqlLoadAssertions(SqlLoadMeasurements measurements, ITestOutputHelper output)
{
    protected void AssertAsyncNearTheLimit()
    {
        var result = measurements["async"];
        var figures = SqlLoadMeasurements.Describe(result);
        output.WriteLine($"{measurements.Provider} {figures}");

        // Measured on a shared 2-core machine (load average 2–5): Embedded (8 s) 118.1 and 117.9 2xx/s (98 %) in 2 runs;
        // PostgreSql (30 s) 118.1 and 115.6 2xx/s (98 %, 96 %) in 2 runs.
        Assert.True(SqlLoadMeasurements.SuccessesPerSecond(result) >= 0.8 * SqlLoadMeasurements.LimitRequestsPerSecond, $"throughput below 80 % of connections/delay. {figures}");
        // Measured: Embedded (30 s) p95 1130 and 1008 ms, 115.6 and 119.4 2xx/s, in 2 runs; PostgreSql (30 s) p95 1007 and
        // 1393 ms in 2 runs, the second beside other load tests on the same two cores.
        Assert.True(result.Load.Latency.P95 <= 1.5 * SqlLoadMeasurements.DelayMs, $"p95 {result.Load.Latency.P95:0} ms > 1.5 × delay. {figures}");
        Assert.True(result.Load.Failures == 0, $"failures. {figures}");
    }

    protected void AssertBadShapeAtMostAThirdOfAsync(string scenario)
    {
        var good = measurements["async"];
        var bad = measurements[scenario];
        var figures = $"{SqlLoadMeasurements.Describe(good)}\n{SqlLoadMeasurements.Describe(bad)}";
        output.WriteLine($"{measurements.Provider}\n{figures}");

        var ratio = SqlLoadMeasurements.SuccessesPerSecond(bad) / SqlLoadMeasurements.SuccessesPerSecond(good);
        // Measured: 0–14 % of async's on Embedded (30 s, 2 runs; 0–2 % at 8 s): with two processors and a cold pool the
        // blocked shapes barely start (see docs/sql.md for why); PostgreSql (30 s) 7–18 % in 2 runs.
        Assert.True(ratio <= 1.0 / 3, $"{scenario}: {ratio:P0} of async's throughput, more than a third. {figures}");
    }
}

[Collection(LoadCollectionDefinition.Name)]
public sealed class EmbeddedSqlLoadTests(EmbeddedSqlLoadMeasurements measurements, ITestOutputHelper output)
    : SqlLoadAssertions(measurements, output), IClassFixture<EmbeddedSqlLoadMeasurements>
{
    [Fact]
    public void AsyncShape_ServesNearConnectionsPerDelay_With120ConnectionsOnTheEmbeddedResponder()
    {
        AssertAsyncNearTheLimit();
    }

    [Theory]
    [InlineData("sync")]
    [InlineData("asyncsyncio")]
    [InlineData("taskrun")]
    [InlineData("wait")]
    public void BadShape_ServesAtMostAThirdOfAsync_With120ConnectionsOnTheEmbeddedResponder(string scenario)
    {
        AssertBadShapeAtMostAThirdOfAsync(scenario);
    }
}

[Collection(LoadCollectionDefinition.Name)]
public sealed class PostgreSqlLoadTests(PostgreSqlLoadMeasurements measurements, ITestOutputHelper output)
    : SqlLoadAssertions(measurements, output), IClassFixture<PostgreSqlLoadMeasurements>
{
    [PostgreSqlFact]
    public void AsyncShape_ServesNearConnectionsPerDelay_With120ConnectionsOnPostgreSql()
    {
        PostgreSqlEnvironment.RequireConnectionString();
        AssertAsyncNearTheLimit();
    }

    [PostgreSqlTheory]
    [InlineData("sync")]
    [InlineData("asyncsyncio")]
    [InlineData("taskrun")]
    [InlineData("wait")]
    public void BadShape_ServesAtMostAThirdOfAsync_With120ConnectionsOnPostgreSql(string scenario)
    {
        PostgreSqlEnvironment.RequireConnectionString();
        AssertBadShapeAtMostAThirdOfAsync(scenario);
    }
}
