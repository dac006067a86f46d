using System.Globalization;
using System.Text.RegularExpressions;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>The console experiment over HTTP: 1000 tasks that each wait one second, on a fresh server with a cold pool.</summary>
[Collection(LoadCollectionDefinition.Name)]
public sealed partial class TaskBurstLoadTests(ITestOutputHelper output)
{
    private const int Count = 1000;
    private const int DelayMs = 1000;

    [Fact]
    public async Task TaskBurst_Async_FinishesWithinTwoDelays()
    {
        var elapsedMs = await BurstAsync("async");

        // Measured: N ms in N runs.
        Assert.True(elapsedMs <= 2 * DelayMs, $"{Count} awaiting tasks took {elapsedMs} ms, more than 2 × {DelayMs} ms.");
    }

    [Fact]
    public async Task TaskBurst_Blocking_TakesAtLeastFiveDelays()
    {
        var elapsedMs = await BurstAsync("blocking");

        // Measured: N ms in N runs.
        Assert.True(elapsedMs >= 5 * DelayMs, $"{Count} blocking tasks took only {elapsedMs} ms, less than 5 × {DelayMs} ms.");
    }

    private async Task<long> BurstAsync(string mode)
    {
        await using var server = await LoadExperiment.StartServerAsync();
        using var client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = TimeSpan.FromSeconds(120) };
        using var sampler = server.SampleThreadCount(TimeSpan.FromSeconds(1));

        var body = await client.GetStringAsync(new Uri($"api/diagscenario/taskburst?count={Count}&mode={mode}&delayMs={DelayMs}", UriKind.Relative)).WaitAsync(TimeSpan.FromSeconds(150));

        sampler.Dispose();
        output.WriteLine($"{body}; server threads peak {sampler.Peak}");
        var match = ElapsedMs().Match(body);
        Assert.True(match.Success, $"no elapsedMs in '{body}'");
        return long.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture);
    }

    [GeneratedRegex(@"elapsedMs=(\d+)")]
    private static partial Regex ElapsedMs();
}
