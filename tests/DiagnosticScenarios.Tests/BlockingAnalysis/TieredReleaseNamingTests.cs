using System.Diagnostics;
using DiagnosticScenarios.BlockingAnalysis;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// Production's shape: apps that are not this one, built Release and run with tiered compilation on (the default), warmed
/// under their requests until the JIT runs every method of every blocking chain optimized (its events say when): compiled
/// at tier 1, or inlined into a method compiled optimized (ASP.NET Core's invokers are compiled at run time, optimized from
/// the start, and inline small actions). Then, with threads parked in every chain, ten snapshots in a row must each name
/// every chain down to the line: the blocking call, each caller's call, the endpoint's own line.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class TieredReleaseNamingTests(ITestOutputHelper output)
{
    private const int Snapshots = 10;

    // How long each simulated query, mail or scan takes.
    private const int LatencyMs = 200;

    // Enough to keep a thread parked in each chain at any instant: each request blocks for one latency or more.
    private const int WorkersPerRoute = 4;

    private static readonly TimeSpan FirstAnswers = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan Tier1Within = TimeSpan.FromSeconds(45);

    private static readonly TimeSpan RequestsPatience = TimeSpan.FromSeconds(1);

    // A call begun in a method's earlier code runs on in it: long enough for the requests in flight at the last promotion
    // (a latency or two each) to end.
    private static readonly TimeSpan CallsInEarlierCodeEnd = TimeSpan.FromSeconds(1.5);

    [Fact]
    public async Task Snapshots_OfAnMvcAppAtTier1_NameEveryBlockingChainToTheLine_TenTimesOutOfTen()
    {
        var app = FixtureApp.ContosoOrders("Release");
        var get = app.At("Controllers/OrdersController.cs", "OrdersController.Get", "var order = _orders.GetOrder(id);");
        var loadOrder = app.At("Services/OrderService.cs", "OrderService.LoadOrder", "var order = _repository.FindAsync(id).Result;");
        Route[] routes =
        [
            new("orders/7", "OrdersController.Get", [[loadOrder, app.At("Services/OrderService.cs", "OrderService.GetOrder", "var order = LoadOrder(id);"), get]]),
            new("orders/7/total", "OrdersController.Total",
            [
                [app.At("Services/OrderService.cs", "OrderService.GetTotal", "var total = Task.Run(() => SumLines(id)).Result;"), app.At("Controllers/OrdersController.cs", "OrdersController.Total", "var total = _orders.GetTotal(id);")],
                [app.At("Services/OrderService.cs", "OrderService.SumLines", "var lines = _repository.GetLinesAsync(id).Result;"), app.At("Services/OrderService.cs", "OrderService+<>c__DisplayClass*.<GetTotal>b__*", "var total = Task.Run(() => SumLines(id)).Result;")],
            ]),
            new("orders/7/items", "OrdersController.Items",
            [
                [app.At("Services/OrderService.cs", "OrderService.CountItems", "var count = Task.Run(() => ItemsIn(_repository.GetLinesAsync(id))).Result;"), app.At("Controllers/OrdersController.cs", "OrdersController.Items", "var items = _orders.CountItems(id);")],
                [app.At("Services/OrderService.cs", "OrderService.ItemsIn", "private static int ItemsIn(Task<IReadOnlyList<OrderLine>> lines) => lines.Result.Count;"), app.At("Services/OrderService.cs", "OrderService+<>c__DisplayClass*.<CountItems>b__*", "var count = Task.Run(() => ItemsIn(_repository.GetLinesAsync(id))).Result;")],
            ]),
            // Two waits in turn, a latency each: loops half a latency apart keep threads at both at once.
            new("orders/7/invoice", "OrdersController.Invoice",
            [
                [app.At("Services/OrderService.cs", "OrderService.Deliver", "sending.Wait();"), app.At("Services/OrderService.cs", "OrderService.SendInvoice", "Deliver(order);"), app.At("Controllers/OrdersController.cs", "OrdersController.Invoice", "_orders.SendInvoice(id);")],
                [loadOrder, app.At("Services/OrderService.cs", "OrderService.SendInvoice", "var order = LoadOrder(id);"), app.At("Controllers/OrdersController.cs", "OrdersController.Invoice", "_orders.SendInvoice(id);")],
            ], Stagger: TimeSpan.FromMilliseconds(LatencyMs / 2.0)),
        ];

        await NamesEveryChainInEverySnapshotAsync(app, routes);
    }

    [Fact]
    public async Task Snapshots_OfAMinimalApiAtTier1_NameEveryBlockingHandlerToTheLine_TenTimesOutOfTen()
    {
        var app = FixtureApp.FabrikamStock("Release");
        Route[] routes =
        [
            new("stock/chai", "Program+<>c.<<Main>$>b__*",
            [[app.At("Warehouse.cs", "Warehouse.CountOnHand", "Thread.Sleep(20);"), app.At("Program.cs", "Program+<>c.<<Main>$>b__*", "var count = warehouse.CountOnHand(sku);")]]),
            new("stock/chai/history", "Program+<>c.<<Main>$>b__*",
            [[app.At("Program.cs", "Program+<>c.<<Main>$>b__*", "var moves = warehouse.LoadHistoryAsync(sku).GetAwaiter().GetResult();")]]),
            new("reservations/chai", "Reservations.Reserve",
            [[app.At("Reservations.cs", "Reservations.Reserve", "var reserved = warehouse.ReserveAsync(sku).Result;")]], HttpMethod.Post),
        ];

        await NamesEveryChainInEverySnapshotAsync(app, routes);
    }

    private async Task NamesEveryChainInEverySnapshotAsync(FixtureApp app, IReadOnlyList<Route> routes)
    {
        // A thread for every loop from the start (hexadecimal, as the runtime reads it), and a shorter latency: the loops'
        // blocked requests park threads without starving the pool, so each route is called often and reaches tier 1 in seconds.
        var options = app.ServerOptions with
        {
            ExtraEnvironment = new Dictionary<string, string>(app.ServerOptions.ExtraEnvironment!)
            {
                ["DOTNET_ThreadPool_ForceMinWorkerThreads"] = "40",
                ["Database__LatencyMs"] = $"{LatencyMs}",
                ["Mail__LatencyMs"] = $"{LatencyMs}",
                ["Warehouse__ScanMs"] = $"{LatencyMs}",
            },
        };
        await using var server = await BlockedServer.StartAsync(options);
        var warming = Stopwatch.StartNew();
        using (var tiers = JitTiers.Listen(server.ProcessId))
        {
            foreach (var route in routes)
            {
                server.Loop(route.Uri, WorkersPerRoute, route.Method, route.Stagger);
            }

            await server.WhenEveryLoopHasAnsweredAsync(FirstAnswers);
            var methods = routes.SelectMany(r => r.Chains).SelectMany(chain => chain).Select(call => call.Method).Distinct().ToList();
            var optimized = await Poll.UntilAsync(() => methods.All(m => tiers.Optimized(m) is not null), Tier1Within);
            output.WriteLine(string.Join('\n', methods.Select(m => $"{m}: {tiers.Optimized(m) ?? "not optimized yet"}")));
            Assert.True(optimized, $"the JIT did not run every chain's methods optimized within {Tier1Within.TotalSeconds:0} s of requests");
        }

        await Task.Delay(CallsInEarlierCodeEnd);
        output.WriteLine($"warmed in {warming.Elapsed.TotalSeconds:0.0} s");
        var inlined = 0;
        var named = routes.ToDictionary(r => r, _ => new HashSet<int>());
        for (var i = 1; i <= Snapshots; i++)
        {
            var snapshot = await Task.Factory.StartNew(() => StackSnapshots.CaptureWithRequests(server.ProcessId, RequestsPatience),
                CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).TimeoutAfter(TimeSpan.FromSeconds(30));
            var sites = snapshot.BlockedPoolSites;
            output.WriteLine($"snapshot {i} ({snapshot.CaptureMs:0} + {snapshot.RequestsMs:0} + {snapshot.AnalysisMs:0} ms):\n  " + string.Join("\n  ", sites.Select(s => s.Describe(snapshot.PoolThreadCount))));
            foreach (var route in routes)
            {
                Assert.True(sites.Any(route.IsNamedToTheLineBy), $"snapshot {i} of {Snapshots} names no chain of {route} to the line");
                named[route].UnionWith(sites.SelectMany(route.ChainsNamedBy));
            }

            // Every parked app frame runs optimized code: tier 1, or an invoker compiled at run time (always optimized).
            Assert.All(sites.SelectMany(s => s.AppFrames), f => Assert.True(f.Tier is "OptimizedTier1" or "Optimized", $"{f} runs {f.Tier} code"));
            inlined += sites.Count(s => s.NamedFrom is not null || s.AppFrames.Any(f => f.Inlined is not null));
        }

        // A route whose requests block at several calls in turn, its loops staggered, has each named: a wait both calls could
        // leave is not put at the first. (Another route's second chain is a Task.Run delegate the waiting thread may run inline.)
        Assert.All(routes.Where(r => r.Stagger > TimeSpan.Zero), route => Assert.True(named[route].Count == route.Chains.Count,
            $"{route}: {Snapshots} snapshots named chains {string.Join(", ", named[route].Order())} of its {route.Chains.Count}"));

        // The shape under test: code the JIT inlined, named back; without it the test tested nothing.
        Assert.True(inlined > 0, "no site of any snapshot had code the JIT inlined");
    }

    /// <summary>A blocking route: its endpoint's method (<c>Type.Method</c>) and the chains its threads may park in, innermost call first.</summary>
    private sealed record Route(string Path, string Endpoint, IReadOnlyList<IReadOnlyList<Call>> Chains, HttpMethod? Method = null, TimeSpan Stagger = default)
    {
        public Uri Uri => new(Path, UriKind.Relative);

        /// <summary>The indexes of the chains the site names, as <see cref="IsNamedToTheLineBy"/> reads them.</summary>
        public IEnumerable<int> ChainsNamedBy(BlockingSite site) => Enumerable.Range(0, Chains.Count).Where(i => Names(site, Chains[i]));

        /// <summary>
        /// The site's app frames (a frame the JIT inlined into another first, then that one) begin with one of the chains,
        /// call by call, each with its line: what a Debug build's stack names.
        /// </summary>
        public bool IsNamedToTheLineBy(BlockingSite site) => Chains.Any(chain => Names(site, chain));

        private static bool Names(BlockingSite site, IReadOnlyList<Call> chain)
        {
            var frames = site.AppFrames.SelectMany(f => f.Inlined is { } inlined ? [inlined, f] : new[] { f }).ToList();
            return frames.Count >= chain.Count && chain.Select((call, i) => call.IsNamedBy(frames[i])).All(named => named);
        }

        public override string ToString() => $"{Method ?? HttpMethod.Get} /{Path}";
    }
}
