using System.Text.Json;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.Tests.LoadRunner;

/// <summary>compare.json, as <c>compare</c> writes it and <c>render</c> reads it.</summary>
public sealed class CompareJsonTests
{
    // Lower-case, as the reports under docs/benchmarks hold them, where the catalogue the verdicts come from writes BAD.
    [Fact]
    public void Verdicts_AreWrittenLowerCase_AndReadInEitherCase()
    {
        var json = JsonSerializer.Serialize(Comparison(ScenarioVerdict.Bad, ScenarioVerdict.Good), CompareJson.Options);
        using var written = JsonDocument.Parse(json);

        var verdicts = written.RootElement.GetProperty("results").EnumerateArray().Select(r => r.GetProperty("verdict").GetString());
        var read = JsonSerializer.Deserialize<ComparisonResult>(json.Replace("\"bad\"", "\"BAD\"", StringComparison.Ordinal), CompareJson.Options)!;

        Assert.Equal(["bad", "good"], verdicts);
        Assert.Equal([ScenarioVerdict.Bad, ScenarioVerdict.Good], read.Results.Select(r => r.Verdict));
    }

    private static ComparisonResult Comparison(params ScenarioVerdict[] verdicts) => new()
    {
        StartedAt = DateTimeOffset.UnixEpoch,
        Family = "mock",
        Connections = 1,
        DurationSeconds = 1,
        TimeoutSeconds = 1,
        DelayMs = null,
        ProcessorCount = 1,
        Machine = "test",
        CommandLine = "compare",
        Results = [.. verdicts.Select((verdict, i) => new ScenarioResult
        {
            Scenario = $"scenario{i}",
            Verdict = verdict,
            Load = Report(),
            Ping = Report(),
            Threads = [],
        })],
    };

    private static LoadReport Report() => new()
    {
        Url = new Uri("http://127.0.0.1:1/"),
        Connections = 1,
        Elapsed = TimeSpan.FromSeconds(1),
        Sent = 0,
        Completed = 0,
        RequestsPerSecond = 0,
        Latency = LatencySummary.Empty,
        LatencyAtLeast = LatencySummary.Empty,
        StatusCodes = new Dictionary<int, long>(),
        Errors = new Dictionary<string, long>(),
        Timeouts = 0,
        Unfinished = 0,
        Timeline = [],
    };
}
