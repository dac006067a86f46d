using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.Scenarios.Blocking;
using DiagnosticScenarios.Scenarios.Catalogue;
using DiagnosticScenarios.Tests.Experiments;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Blocking;

/// <summary>
/// The blocking family measured as <c>compare --family blocking</c> measures it: each scenario on a fresh server (cold
/// pool, <c>DOTNET_PROCESSOR_COUNT=2</c>) at its catalogue defaults, 125 connections from a load-runner process, with a
/// stack snapshot one second into the load and a trace of the server's waits over the whole load.
/// </summary>
public sealed class BlockingLoadMeasurements : MeasurementCache
{
    public const int Connections = LoadExperiment.Connections;

    /// <summary>
    /// The mock family's load (<see cref="LoadExperiment.Duration"/>): twenty waves of the 200 ms pairs and about 250 turns
    /// of the lock; the GOOD twins reach their limit in the first wave (their waits need no thread), while the cold pool of
    /// a BAD one grows slowly, and the starvation rule reads its window of counters under the load.
    /// </summary>
    public static readonly TimeSpan Duration = LoadExperiment.Duration;

    /// <summary>
    /// A request unanswered after this long counts as a timeout, at least: ten delays of the 200 ms pairs, four times the
    /// semaphore pair's 0.5 s queue, and later than the sending (<see cref="LoadExperiment.TimeoutAfterSending"/>). A BAD
    /// measurement drains for this long at most.
    /// </summary>
    public static readonly TimeSpan RequestTimeout = Duration + LoadExperiment.TimeoutAfterSending;

    protected override ComparisonOptions Options { get; } = new()
    {
        AppPath = LoadExperiment.AppPath,
        Family = ScenarioCatalogue.Blocking.Name,
        Connections = Connections,
        Duration = Duration,
        Timeout = RequestTimeout,
        ProcessorCount = 2,
    };

    /// <summary>
    /// In a closed loop at its limit every request waits Connections / limit (Little's law): the lock pair's 125 turns of
    /// 16 ms, 2 s, get half as long again; the others the common timeout. Once sending stops, the requests in flight get
    /// that wait and a half again (half a second at least), which a GOOD twin's last requests need, and are then cut off
    /// unfinished: a BAD one's would only wait out their timeouts. A pair's twins share their defaults, so both get the same.
    /// </summary>
    protected override ComparisonOptions OptionsFor(string scenario)
    {
        var queued = TimeSpan.FromSeconds(Connections / LimitRequestsPerSecond(CatalogueData.Find(ScenarioCatalogue.Blocking, scenario)));
        var timeout = TimeSpan.FromTicks(Math.Max(RequestTimeout.Ticks, (long)(1.5 * queued.Ticks)));
        var drain = TimeSpan.FromTicks(Math.Clamp((long)(1.5 * queued.Ticks), MinimumDrain.Ticks, timeout.Ticks));
        return Options with { Timeout = timeout, Drain = drain };
    }

    private static readonly TimeSpan MinimumDrain = TimeSpan.FromSeconds(0.5);

    /// <summary>
    /// The pairs whose options are the same in one comparison: a pair's twins share their defaults, so their options, and
    /// pairs whose requests wait alike share them too (the 200 ms pairs; the two whose throttle or upstream makes them wait
    /// half a second; the lock alone).
    /// </summary>
    protected override IEnumerable<IReadOnlyList<string>> Batches => CatalogueData.BlockingPairs()
        .GroupBy(p => OptionsFor(p.Bad.Name))
        .Select(pairs => (IReadOnlyList<string>)[.. pairs.SelectMany(p => new[] { p.Bad.Name, p.Good.Name })]);

    /// <summary>Two thirds into the load: every BAD scenario's cold pool has parked its threads by then.</summary>
    protected override TimeSpan? SnapshotAfter => TimeSpan.FromSeconds(1);

    /// <summary>
    /// What a scenario can serve at its catalogue defaults with <see cref="Connections"/> clients: as many requests at once as
    /// its throttle lets through (the lock pair one, the semaphore pair its size, the others every connection), each taking
    /// its delay (for bodyread, the client's upload).
    /// </summary>
    public static double LimitRequestsPerSecond(Scenario scenario)
    {
        var atOnce = Math.Min(Connections, scenario.Defaults?.GetValueOrDefault("throttle", Connections) ?? Connections);
        return atOnce * 1000.0 / DelayMs(scenario);
    }

    /// <summary>How long one request of the scenario waits at its catalogue defaults: its delay, or its client's upload.</summary>
    public static int DelayMs(Scenario scenario) => scenario.Load?.UploadMs ?? scenario.Defaults!["delayMs"];

    public static string Describe(ScenarioResult result) =>
        LoadExperiment.Describe(result, LimitRequestsPerSecond(CatalogueData.Find(ScenarioCatalogue.Blocking, result.Scenario)));
}

/// <summary>
/// Each BAD pair of the blocking family degraded against its GOOD twin, and each GOOD twin near its own physical limit,
/// measured in the same run; then what a stack snapshot and a wait trace of each say. Margins are ratios with room for a
/// shared 2-core machine under load.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class BlockingLoadTests(BlockingLoadMeasurements measurements, ITestOutputHelper output) : IClassFixture<BlockingLoadMeasurements>
{
    /// <summary>The lock serves one request per delay either way: its pair is told apart by ping, not by throughput.</summary>
    private const string Lock = "lock";

    public static TheoryData<string> BadTwinsBoundedByTheirWaitOnly => [.. CatalogueData.BlockingPairs().Select(p => p.Bad.Name).Where(name => name != Lock)];

    [Theory]
    [MemberData(nameof(CatalogueData.BlockingGoodTwins), MemberType = typeof(CatalogueData))]
    public async Task GoodTwin_ServesNearItsPhysicalLimit_Under125Connections(string good)
    {
        var scenario = Blocking(good);
        var result = await measurements.MeasureAsync(good);

        var figures = BlockingLoadMeasurements.Describe(result);
        output.WriteLine(figures);
        var limit = BlockingLoadMeasurements.LimitRequestsPerSecond(scenario);
        // Below 100 %: the answers' own CPU on two loaded cores, the snapshot's and the trace's sampling pauses, the lock turn's
        // timer. 70 %: room for a shared machine's slow hour, and still far above a BAD twin (half its twin's answers at most).
        Assert.True(result.Load.RequestsPerSecond >= 0.7 * limit, $"{good}: throughput below 70 % of its limit, {limit:0} req/s. {figures}");
        // The other way: a throttle that stopped throttling (or a limit worked out wrong) would show here.
        Assert.True(result.Load.RequestsPerSecond <= 1.1 * limit, $"{good}: throughput above its limit, {limit:0} req/s. {figures}");
        Assert.True(result.Load.Failures == 0, $"{good}: failures. {figures}");
    }

    [Theory]
    [MemberData(nameof(BadTwinsBoundedByTheirWaitOnly))]
    public async Task BadScenario_AnswersAtMostHalfOfItsGoodTwin_Under125Connections(string bad)
    {
        var scenario = Blocking(bad);
        var good = await measurements.MeasureAsync(CatalogueData.TwinOf(scenario).Name);
        var result = await measurements.MeasureAsync(bad);

        var figures = $"{BlockingLoadMeasurements.Describe(good)}\n{BlockingLoadMeasurements.Describe(result)}";
        output.WriteLine(figures);
        // Answers, not a rate: a BAD twin answers in waves of its 125 connections, and a rate would divide them by the time its
        // last wave took, which moves. bodyread's block lets go by itself (a body Kestrel has already buffered does not block), so
        // the busier the machine the more waves it answers; half admits a few of them and still fails a BAD twin that stopped blocking.
        var ratio = (double)result.Load.Successes / good.Load.Successes;
        Assert.True(ratio <= 0.5, $"{bad}: {ratio:P0} of its GOOD twin's answers, more than half. {figures}");
    }

    [Fact]
    public async Task Lock_MakesPingFarSlowerThanLockAsync_ThoughTheLockBoundsBothToOneRequestPerDelay()
    {
        var good = await measurements.MeasureAsync("lock-async");
        var bad = await measurements.MeasureAsync(Lock);

        var figures = $"{BlockingLoadMeasurements.Describe(good)}\n{BlockingLoadMeasurements.Describe(bad)}";
        output.WriteLine(figures);
        var throughputRatio = bad.Load.RequestsPerSecond / good.Load.RequestsPerSecond;
        var pingRatio = bad.Ping.LatencyAtLeast.P50 / Math.Max(good.Ping.LatencyAtLeast.P50, 1);
        // Both near one request per delay; a BAD run whose starved pool is slow to hand the lock's next requests a thread can lose
        // whole seconds, so half is the bound, where every other BAD twin answers well under half of its twin's.
        Assert.True(throughputRatio is >= 0.5 and <= 1.3, $"lock served {throughputRatio:P0} of lock-async's throughput: the lock no longer bounds both. {figures}");
        // Under lock, ping waits behind the requests queued for the pool: seconds against milliseconds, far beyond ten times.
        Assert.True(pingRatio >= 10, $"ping's median under lock only {pingRatio:0.0} × under lock-async. {figures}");
        Assert.True(good.Ping.LatencyAtLeast.P50 <= LoadExperiment.PingUnderGoodLoadMs, $"ping's median under lock-async over {LoadExperiment.PingUnderGoodLoadMs} ms. {figures}");
    }

    // One second into the load every busy pool thread waits in the BAD action's blocking call, of the kind listed (httpclient
    // mostly in GetResult inside HttpClient.Send, the rest in its socket read). A lock waiter sends the pool no signal, so lock's
    // pool stays near its minimum and the holder's Thread.Sleep may top instead; the waiters' site must still be there
    // (Lock_SnapshotUnderLoad_HasPoolThreadsWaitingOnTheLockInTheAction).
    public static TheoryData<string, BlockingKind, BlockingKind[]> BadBlocking => new()
    {
        { "lock", BlockingKind.Monitor, [BlockingKind.Sleep] },
        { "semaphore", BlockingKind.SemaphoreSlim, [] },
        { "httpclient", BlockingKind.GetAwaiterGetResult, [BlockingKind.SocketRead] },
        { "bodyread", BlockingKind.GetAwaiterGetResult, [] },
        { "blockingcollection", BlockingKind.SemaphoreSlim, [] },
        { "difactory", BlockingKind.TaskWait, [] },
    };

    [Theory]
    [MemberData(nameof(BadBlocking))]
    public async Task BadScenario_SnapshotUnderLoad_TopPoolSiteNamesTheActionAndItsBlockingCall(string bad, BlockingKind blocking, BlockingKind[] alsoBlocking)
    {
        var snapshot = await measurements.SnapshotAsync(bad);

        output.WriteLine(BlockedStacks.Describe(snapshot));
        BlockedStacks.AssertTopSiteNames(snapshot, Blocking(bad), blocking, alsoBlocking);
    }

    [Fact]
    public async Task Lock_SnapshotUnderLoad_HasPoolThreadsWaitingOnTheLockInTheAction()
    {
        var snapshot = await measurements.SnapshotAsync(Lock);

        output.WriteLine(BlockedStacks.Describe(snapshot));
        // Whichever site tops (see BadBlocking), the requests behind the holder wait on the lock itself.
        BlockedStacks.AssertSomeSiteNames(snapshot, Blocking(Lock), BlockingKind.Monitor);
    }

    // The fix a site ends with is its pair's, whatever framework wait lies beneath the call (difactory's .Result sits in a
    // delegate the DI container calls, where "make the caller async" cannot be done). The call's kinds are every one its threads
    // may wait in (httpclient's Send also reads its socket); lock's other kind is the holder's wait, not the blocking call.
    public static TheoryData<string, BlockingKind[]> BadBlockingCall
    {
        get
        {
            var data = new TheoryData<string, BlockingKind[]>();
            foreach (var row in BadBlocking)
            {
                var (bad, blocking, also) = ((string)row[0], (BlockingKind)row[1], (BlockingKind[])row[2]);
                data.Add(bad, bad == Lock ? [blocking] : [blocking, .. also]);
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(BadBlockingCall))]
    public async Task BadScenario_SnapshotUnderLoad_SiteOfItsBlockingCallEndsWithItsOwnPairsFix(string bad, BlockingKind[] call)
    {
        var scenario = Blocking(bad);
        var snapshot = await measurements.SnapshotAsync(bad);

        var sites = snapshot.BlockedPoolSites.Where(s => call.Contains(s.Blocking.Kind) && BlockedStacks.Names(s, scenario)).ToList();
        var pair = $"({scenario.Route} → {scenario.Twin!.Split('/')[^1]})";

        output.WriteLine(string.Join('\n', sites.Select(s => $"{s.Describe(snapshot.PoolThreadCount)}\n  fix: {s.Fix}")));
        Assert.True(sites.Count > 0, $"no site of {bad}'s call ({string.Join(", ", call)}). {BlockedStacks.Describe(snapshot)}");
        Assert.All(sites, s => Assert.True(s.Fix?.EndsWith(pair, StringComparison.Ordinal) == true, $"{bad}'s site ends with the fix {s.Fix}, not its pair's {pair}"));
    }

    [Theory]
    [MemberData(nameof(BadBlocking))]
    public async Task BadScenario_RuntimeViewUnderLoad_IsTheCataloguesCells(string bad, BlockingKind blocking, BlockingKind[] alsoBlocking)
    {
        var scenario = Blocking(bad);
        var diagnosis = await measurements.DiagnosisAsync(bad);

        RuntimeViews.AssertIsTheCatalogues(diagnosis, scenario, output, $"{bad} ({blocking}{string.Concat(alsoBlocking.Select(b => $", {b}"))})");
    }

    [Theory]
    [MemberData(nameof(CatalogueData.BlockingGoodTwins), MemberType = typeof(CatalogueData))]
    public async Task GoodTwin_SnapshotUnderLoad_HasNoPoolThreadParkedInTheApp(string good)
    {
        var snapshot = await measurements.SnapshotAsync(good);

        output.WriteLine(BlockedStacks.Describe(snapshot));
        BlockedStacks.AssertNoPoolGroupBlockedInApp(snapshot, Blocking(good));
    }

    [Fact]
    public async Task HttpClientAsync_SnapshotUnderLoad_ShowsTheSlowUpstreamWaitingOnThreadsOfItsOwn()
    {
        var snapshot = await measurements.SnapshotAsync("httpclient-async");

        output.WriteLine(BlockedStacks.Describe(snapshot));
        // The upstream's connection threads: in its methods (and the lambdas and state machines the compiler nests in them), or in
        // its threaded server between two requests of a kept-alive connection. SlowUpstream.Resource is not the upstream's: the
        // GOOD twin's action calls it on a pool thread to build the address it asks for.
        var upstream = snapshot.Groups.Where(g => g.AppFrames.Any(f =>
            ((f.Method.StartsWith(nameof(SlowUpstream) + ".", StringComparison.Ordinal) && !f.Method.StartsWith($"{nameof(SlowUpstream)}.{nameof(SlowUpstream.Resource)}", StringComparison.Ordinal))
                || f.Method.StartsWith(nameof(SlowUpstream) + "+", StringComparison.Ordinal))
            || f.Method.StartsWith(nameof(HttpRequestReader) + ".", StringComparison.Ordinal))).ToList();
        var waiting = upstream.Sum(g => g.Threads);
        // At the GOOD twin's limit nearly every request in flight waits at the upstream, on its threads, none of them the pool's.
        Assert.True(waiting >= BlockingLoadMeasurements.Connections / 2, $"only {waiting} threads in the upstream's code. {BlockedStacks.Describe(snapshot)}");
        Assert.DoesNotContain(upstream, g => g.PoolThreads);
    }

    // Every BAD shape of the family raises WaitHandleWait: Lock and SemaphoreSlim wait in the runtime's wait handles, the Task
    // waits in ManualResetEventSlim, and even HttpClient.Send's socket read does (.NET on Linux waits for it in
    // SocketAsyncContext). So `waits` names each one, with the same call as the snapshot.
    [Theory]
    [MemberData(nameof(BadBlocking))]
    public async Task BadScenario_WaitTraceUnderLoad_TopPoolWaitSiteNamesTheActionAndItsBlockingCall(string bad, BlockingKind blocking, BlockingKind[] alsoBlocking)
    {
        var scenario = Blocking(bad);
        var waits = await measurements.WaitsAsync(bad);

        var described = Describe(waits);
        output.WriteLine(described);
        var top = waits.TopSite();
        Assert.True(top is not null, $"{bad}: no wait on a pool thread. {described}");
        Assert.True(BlockedStacks.Names(top, scenario), $"{bad}: the top wait site names neither {scenario.Action} at a line of its body nor, inlined, {scenario.Route}. {described}");
        Assert.True(top.Blocking?.Kind == blocking || alsoBlocking.Contains(top.Blocking!.Kind),
            $"{bad}: the top wait site waits in {top.Blocking?.Kind}, not {string.Join(" or ", alsoBlocking.Prepend(blocking))}. {described}");
        // The pair's wait itself, not a lock inside an awaited call contended for a moment (which a GOOD twin shows too).
        Assert.True(top.MaxWaitMs >= BlockingLoadMeasurements.DelayMs(scenario), $"{bad}: no wait at the top site lasted the pair's {BlockingLoadMeasurements.DelayMs(scenario)} ms. {described}");
    }

    // The GOOD twins wait too, for a moment: a framework lock contended under load (SemaphoreSlim's own, the timer queue's)
    // raises WaitHandleWait. What must not show is the pair's wait itself: one of the action's own, not inside a call it awaits
    // (where a loaded machine can stretch a moment's wait to a lock turn), lasting its delay.
    [Theory]
    [MemberData(nameof(CatalogueData.BlockingGoodTwins), MemberType = typeof(CatalogueData))]
    public async Task GoodTwin_WaitTraceUnderLoad_HasNoWaitOfItsActionsOwnAsLongAsItsDelay(string good)
    {
        var scenario = Blocking(good);
        var waits = await measurements.WaitsAsync(good);
        var result = await measurements.MeasureAsync(good);

        var described = Describe(waits);
        output.WriteLine(described);
        var delayMs = BlockingLoadMeasurements.DelayMs(scenario);
        // A trace of the load: the app's own threads wait all the time, so only its requests' start events say it was on.
        Assert.True(waits.RequestsStarted > 0 && result.Load.Successes > 0, $"{good}: the trace saw {waits.RequestsStarted} requests start, or the load got no answer. {described}");
        Assert.DoesNotContain(waits.Sites, s => (s.AppFrames.Any(f => BlockedStacks.IsFrameOf(f.Method, scenario.Action)) || BlockedStacks.Names(s, scenario)) && !s.InAwaitedCall && s.MaxWaitMs >= delayMs);
    }

    [Theory]
    [MemberData(nameof(CatalogueData.BlockingGoodTwins), MemberType = typeof(CatalogueData))]
    public async Task GoodTwin_UnderLoad_TheStarvationRuleNeverDeclaresStarvation(string good) =>
        RuntimeViews.AssertTheRuleNeverDeclaresStarvation(await measurements.WaitsAsync(good), output, good);

    private static Scenario Blocking(string name) => CatalogueData.Find(ScenarioCatalogue.Blocking, name);

    private static string Describe(WaitAnalysis waits) =>
        string.Create(CultureInfo.InvariantCulture, $"{waits.Waits} waits in {waits.DurationMs} ms, {waits.PoolWaits} on pool threads, sites:\n")
        + string.Join('\n', waits.Sites.Take(8).Select(s => "  " + s.Describe()));
}
