using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Experiments;
using DiagnosticScenarios.Tests.PoolHealth.Metrics;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Mock;

/// <summary>
/// A starved process still obeys: it drops the work of a client that has gone, and a stop signal ends it.
/// Each on a fresh server of its own with two processors, starved by a default blocking taskburst (1000 tasks of 1 s).
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class StarvedProcessTests(ITestOutputHelper output)
{
    private const string DefaultBlockingBurst = "api/diagscenario/taskburst";
    private static readonly TimeSpan PingPatience = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan ShutdownTimeout = TimeSpan.FromSeconds(2);

    // A taskburst or a hundred held requests park both starting pool threads as soon as they arrive; from then on a ping
    // goes unanswered. The tests wait for that, up to this long, before they go on.
    private static readonly TimeSpan StarvedWithin = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task Ping_AnswersFastWithin15Seconds_AfterTheClientOfABlockingBurstLeaves()
    {
        await using var server = await LoadExperiment.StartServerAsync();
        using var client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = Timeout.InfiniteTimeSpan };
        using var leave = new CancellationTokenSource();
        var burst = SendUntilLeftAsync(client, leave.Token);

        var starved = await UntilStarvedAsync(client);
        // The client leaves only once the ping has its verdict: a ping still queued when the burst's tasks are dropped
        // is answered at once, so leaving while it waits would let it through. Without the app's disconnect watch the burst
        // runs on after the client leaves and ping goes unanswered for many seconds.
        await leave.CancelAsync();
        await burst.DefaultTimeout();
        var left = Stopwatch.StartNew();
        TimeSpan? answeredAfter = null;
        while (left.Elapsed < TimeSpan.FromSeconds(15) && answeredAfter is null)
        {
            if (await PingAsync(client) is not null)
            {
                answeredAfter = left.Elapsed;
            }
        }

        output.WriteLine($"a ping went unanswered {Describe(starved)} into the burst; after the client left, the first ping within {PingPatience.TotalSeconds:0} s came after {Describe(answeredAfter)}");
        Assert.True(starved is not null, $"ping kept answering for {StarvedWithin.TotalSeconds:0} s of the burst: it did not starve the pool, so this test proves nothing");
        Assert.True(answeredAfter is not null, $"ping did not answer within {PingPatience.TotalSeconds:0} s for 15 s after the client left");
    }

    [Fact]
    public async Task Sigterm_EndsTheProcessGracefully_WhileABlockingBurstStarvesThePool()
    {
        await using var server = await StartWithShutdownTimeoutAsync();
        using var client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = Timeout.InfiniteTimeSpan };
        using var clientGivesUp = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var burst = client.GetAsync(new Uri(DefaultBlockingBurst, UriKind.Relative), clientGivesUp.Token);

        var starved = await UntilStarvedAsync(client);
        var exitedAfter = await TerminateAsync(server);
        await clientGivesUp.CancelAsync();
        await DrainAsync(burst).DefaultTimeout();

        output.WriteLine($"a ping went unanswered {Describe(starved)} into the burst; exited {Describe(exitedAfter)} after SIGTERM\n{Tail(server.Output)}");
        Assert.True(starved is not null, $"ping kept answering for {StarvedWithin.TotalSeconds:0} s before SIGTERM: the pool was not starved, so this test proves nothing");
        Assert.True(exitedAfter < ShutdownTimeout, $"the process took {Describe(exitedAfter)} to end after SIGTERM; the shutdown timeout is {ShutdownTimeout.TotalSeconds:0} s");
        Assert.DoesNotContain("did not stop within its shutdown timeout", server.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Sigterm_EndsTheProcessWithinTheShutdownTimeout_WhileBlockingRequestsStarveThePool()
    {
        // Requests that ignore cancellation and outlast the shutdown timeout: the host's graceful stop cannot finish in time.
        await using var server = await StartWithShutdownTimeoutAsync();
        using var client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = Timeout.InfiniteTimeSpan };
        using var clientsGiveUp = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var blocking = Enumerable.Range(0, 100)
            .Select(_ => client.GetAsync(new Uri("api/diagscenario/tasksleepwait?delayMs=20000", UriKind.Relative), clientsGiveUp.Token))
            .ToList();

        var starved = await UntilStarvedAsync(client);
        var exitedAfter = await TerminateAsync(server);
        await clientsGiveUp.CancelAsync();
        await Task.WhenAll(blocking.Select(DrainAsync)).DefaultTimeout();

        output.WriteLine($"a ping went unanswered {Describe(starved)} into the blocking requests; exited {Describe(exitedAfter)} after SIGTERM\n{Tail(server.Output)}");
        Assert.True(starved is not null, $"ping kept answering for {StarvedWithin.TotalSeconds:0} s before SIGTERM: the pool was not starved, so this test proves nothing");
        // The watchdog ends the process at the shutdown timeout; up to two seconds more is the exit itself on a busy machine
        // (the metrics export's ProcessExit handler holds Environment.Exit until the watchdog's 250 ms grace kills the process),
        // far from the 20 s the requests would hold it.
        Assert.True(exitedAfter < ShutdownTimeout + TimeSpan.FromSeconds(2), $"the process took {Describe(exitedAfter)} to end after SIGTERM; the shutdown timeout is {ShutdownTimeout.TotalSeconds:0} s");
    }

    private static Task<ServerProcess> StartWithShutdownTimeoutAsync() =>
        OutOfProcessApp.StartAsync(o => o with
        {
            ExtraEnvironment = new Dictionary<string, string> { ["DOTNET_shutdownTimeoutSeconds"] = $"{ShutdownTimeout.TotalSeconds:0}" },
        });

    private static async Task SendUntilLeftAsync(HttpClient client, CancellationToken leave)
    {
        try
        {
            using var response = await client.GetAsync(new Uri(DefaultBlockingBurst, UriKind.Relative), leave);
            throw new InvalidOperationException($"The default blocking burst answered {(int)response.StatusCode} before its client left; it should take minutes.");
        }
        catch (OperationCanceledException) when (leave.IsCancellationRequested)
        {
            // The client leaves, closing its connection.
        }
    }

    private static async Task DrainAsync(Task<HttpResponseMessage> request)
    {
        try
        {
#pragma warning disable VSTHRD003 // deliberate: the request was started by this test, which has no SynchronizationContext
            using var response = await request;
#pragma warning restore VSTHRD003
        }
        catch (Exception e) when (e is HttpRequestException or OperationCanceledException or SocketException)
        {
            // The server went away or the client gave up: either way the request is over. A connection the server's exit cut while
            // it was being made fails with the socket's own exception.
        }
    }

    /// <summary>How long after the call a ping first went unanswered within <see cref="PingPatience"/>, or null if every ping was answered for <see cref="StarvedWithin"/>.</summary>
    private static async Task<TimeSpan?> UntilStarvedAsync(HttpClient client)
    {
        var clock = Stopwatch.StartNew();
        var (starved, _) = await Poll.UntilAsync(() => PingAsync(client), answered => answered is null, StarvedWithin);
        return starved ? clock.Elapsed : null;
    }

    /// <summary>How long ping took, or null when it did not answer within <see cref="PingPatience"/>.</summary>
    private static Task<TimeSpan?> PingAsync(HttpClient client) => Ping.AnswerTimeAsync(client, PingPatience);

    /// <summary>Sends SIGTERM (what Ctrl+C's sibling, <c>docker stop</c> and systemd send) and waits up to 20 s for the process to end.</summary>
    private static async Task<TimeSpan?> TerminateAsync(ServerProcess server)
    {
        var kill = await ChildProcess.RunAsync(new ChildProcessStart("kill", ["-TERM", server.ProcessId.ToString(CultureInfo.InvariantCulture)]), TimeoutExtensions.Default);
        Assert.True(kill.ExitCode == 0, kill.ToString());
        var clock = Stopwatch.StartNew();
        return await Poll.UntilAsync(() => server.HasExited, TimeSpan.FromSeconds(20)) ? clock.Elapsed : null;
    }

    private static string Describe(TimeSpan? elapsed) => elapsed is { } e ? $"{e.TotalMilliseconds:0} ms" : "never (timed out)";

    private static string Tail(string log) => string.Join('\n', log.Split('\n').TakeLast(6));
}
