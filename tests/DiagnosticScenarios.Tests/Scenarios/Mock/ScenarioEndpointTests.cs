using System.Diagnostics;
using System.Net;
using DiagnosticScenarios.Scenarios.Catalogue;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Mock;

/// <summary>
/// Each scenario's unloaded latency, and the CPU scenario's spin, one request at a time and alone: the latencies are only
/// unloaded, and the test host's CPU is only the spin's, when nothing else runs. What the scenarios answer, with no clock,
/// is <see cref="ScenarioAnswerTests"/>', beside the other functional tests.
/// </summary>
[Collection(UnloadedTimingCollection.Name)]
public sealed class ScenarioEndpointTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    // Unloaded, one request at a time, after a warm-up: the answer may exceed the mock delay only by
    // routing, a thread hop and the 10 ms polling step of tasksleepwait. 250 ms also absorbs a GC pause or a
    // busy neighbour.
    private static readonly TimeSpan UnloadedMargin = TimeSpan.FromMilliseconds(250);

    private static readonly TimeSpan PingMargin = TimeSpan.FromMilliseconds(50);

    // Timers tick on a millisecond clock, so a 500 ms delay can end a millisecond or two before a Stopwatch says 500.
    internal static readonly TimeSpan TimerResolution = TimeSpan.FromMilliseconds(15);

    [Theory]
    [MemberData(nameof(CatalogueData.MockShapes), MemberType = typeof(CatalogueData))]
    public async Task MockScenario_AnswersWithinMarginOfDefaultDelay_WhenUnloaded(string scenario)
    {
        using var client = _app.CreateClient();
        await GetAsync(client, $"/api/diagscenario/{scenario}?delayMs=0");
        var defaultDelay = TimeSpan.FromMilliseconds(ScenarioCatalogue.Mock.DefaultDelayMs!.Value);

        var fastest = await FastestAnswerAsync(client, $"/api/diagscenario/{scenario}", defaultDelay, $"success:{scenario}");

        Assert.True(fastest <= defaultDelay + UnloadedMargin, $"{scenario}: fastest of {Attempts} answers {fastest.TotalMilliseconds:F0} ms, over {defaultDelay.TotalMilliseconds} ms + {UnloadedMargin.TotalMilliseconds} ms.");
    }

    // 100 ms: the default's 500 would answer past 100 ms and the margin, and the lower bound refuses a delay not waited.
    [Theory]
    [MemberData(nameof(CatalogueData.MockShapes), MemberType = typeof(CatalogueData))]
    public async Task MockScenario_HonoursDelayMs_WhenGiven(string scenario)
    {
        using var client = _app.CreateClient();
        await GetAsync(client, $"/api/diagscenario/{scenario}?delayMs=0");
        var delay = TimeSpan.FromMilliseconds(100);

        var fastest = await FastestAnswerAsync(client, $"/api/diagscenario/{scenario}?delayMs=100", delay, $"success:{scenario}");

        Assert.True(fastest <= delay + UnloadedMargin, $"{scenario}: fastest of {Attempts} answers {fastest.TotalMilliseconds:F0} ms, over {delay.TotalMilliseconds} ms + {UnloadedMargin.TotalMilliseconds} ms.");
    }

    [Fact]
    public async Task Ping_AnswersAtOnce()
    {
        using var client = _app.CreateClient();
        await GetAsync(client, "/api/diagscenario/ping");

        // The fastest of a few, as for the scenarios, within a tenth of the mock query's delay.
        var fastest = await FastestAnswerAsync(client, "/api/diagscenario/ping", TimeSpan.Zero, "success:ping", PingMargin);

        Assert.True(fastest <= PingMargin, $"ping: fastest of {Attempts} answers {fastest.TotalMilliseconds:F0} ms unloaded, over {PingMargin.TotalMilliseconds} ms.");
    }

    [Fact]
    public async Task HighCpu_SpinsForTheGivenTime()
    {
        using var client = _app.CreateClient();
        await GetAsync(client, "/api/diagscenario/highcpu/1");
        var spin = TimeSpan.FromMilliseconds(300);

        // A spin burns the CPU for as long as its thread is scheduled; a sleep or a timer for the same time burns next to
        // none. Another process on the cores can only take CPU from the spin, so the most of up to three answers decides.
        var answers = new List<(TimeSpan Elapsed, TimeSpan Cpu)>();
        while (answers.Count < Attempts && !answers.Any(a => a.Cpu >= spin / 2))
        {
            var cpuBefore = Environment.CpuUsage.TotalTime;
            var watch = Stopwatch.StartNew();
            var answer = await GetAsync(client, $"/api/diagscenario/highcpu/{spin.TotalMilliseconds}");
            answers.Add((watch.Elapsed, Environment.CpuUsage.TotalTime - cpuBefore));

            Assert.Equal((HttpStatusCode.OK, "success:highcpu"), answer);
        }

        var figures = string.Join(", ", answers.Select(a => $"{a.Elapsed.TotalMilliseconds:F0} ms taking {a.Cpu.TotalMilliseconds:F0} ms of CPU"));
        output.WriteLine(figures);
        Assert.True(answers.All(a => a.Elapsed >= spin), $"highcpu/300 answered before its 300 ms: {figures}");
        // The spin ends by the clock: noise can only add to an answer, so the fastest bounds it.
        Assert.True(answers.Min(a => a.Elapsed) <= spin + UnloadedMargin, $"highcpu/300 spun well past its 300 ms: {figures}");
        Assert.True(answers.Max(a => a.Cpu) >= spin / 2, $"highcpu/300 took too little CPU to have spun: {figures}");
    }

    /// <summary>
    /// The memory scenarios run in the same test host before this class (memspike's hundreds of megabytes): earlier tests'
    /// garbage is collected before a clock starts, so that collecting it cannot land inside a measurement.
    /// </summary>
    // Noise only ever adds time to an answer (a GC, a stall of the whole test host), so the fastest of a few tells how long
    // the scenario itself takes.
    private const int Attempts = 3;

    /// <summary>
    /// Sends <paramref name="path"/> up to <see cref="Attempts"/> times, each after collecting earlier tests' garbage, and
    /// answers the fastest; stops at the first answer within <paramref name="margin"/> (the unloaded margin unless given) of
    /// <paramref name="delay"/>. Every answer must be <paramref name="body"/> and none may come before the delay.
    /// </summary>
    private static async Task<TimeSpan> FastestAnswerAsync(HttpClient client, string path, TimeSpan delay, string body, TimeSpan? margin = null)
    {
        var fastest = TimeSpan.MaxValue;
        for (var attempt = 0; attempt < Attempts && fastest > delay + (margin ?? UnloadedMargin); attempt++)
        {
            CollectEarlierTestsGarbage();
            var watch = Stopwatch.StartNew();
            var answer = await GetAsync(client, path);
            watch.Stop();

            Assert.Equal((HttpStatusCode.OK, body), answer);
            Assert.True(watch.Elapsed >= delay - TimerResolution, $"{path} answered in {watch.Elapsed.TotalMilliseconds:F0} ms, before its {delay.TotalMilliseconds} ms delay.");
            fastest = watch.Elapsed < fastest ? watch.Elapsed : fastest;
        }

        return fastest;
    }

    private static void CollectEarlierTestsGarbage()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }

    internal static async Task<(HttpStatusCode Status, string Body)> GetAsync(HttpClient client, string path)
    {
        using var response = await client.GetAsync(new Uri(path, UriKind.Relative)).DefaultTimeout();
        return (response.StatusCode, await response.Content.ReadAsStringAsync().DefaultTimeout());
    }
}
