using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.BlockingAnalysis;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// The CLI on apps that are not this one (tests/fixtures, other namespaces, nothing in them that helps the tool), Debug and
/// Release: a fresh process on two processors, loops of requests on each blocking route, then <c>stacks</c> and <c>waits</c>
/// as processes of their own. Debug keeps every frame, so each site names the blocking method and its line first, with its
/// callers' lines after; Release inlines small methods into ASP.NET Core's compiled invokers, so a site names the innermost
/// method left and its line, or says where the code was inlined and the route its threads serve.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class FixtureAppDiagnosisTests(ITestOutputHelper output)
{
    // Enough to hold a few threads in each route's wait on a pool that starts with two; each request lasts one or two
    // latencies (400 ms), so every thread parked at the end started its request within the requests window.
    private const int WorkersPerRoute = 3;
    private static readonly TimeSpan FirstAnswers = TimeSpan.FromSeconds(30);
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    [Theory]
    [InlineData("Debug", false)]
    [InlineData("Release", true)]
    public async Task StacksAndWaits_OnAnMvcAppBlockingInItsServices_NameEachBlockingLine_OrTheInvokerAndRoute_FromTheCliOrTheInstalledTool(string configuration, bool installedTool)
    {
        var app = FixtureApp.ContosoOrders(configuration);
        BlockingChain[] chains =
        [
            new("orders/7", BlockingKind.TaskWait,
            [
                app.At("Services/OrderService.cs", "OrderService.LoadOrder", "var order = _repository.FindAsync(id).Result;"),
                app.At("Services/OrderService.cs", "OrderService.GetOrder", "var order = LoadOrder(id);"),
                app.At("Controllers/OrdersController.cs", "OrdersController.Get", "var order = _orders.GetOrder(id);"),
            ]),
            new("orders/7/total", BlockingKind.TaskWait,
            [
                app.At("Services/OrderService.cs", "OrderService.SumLines", "var lines = _repository.GetLinesAsync(id).Result;"),
                app.At("Services/OrderService.cs", "OrderService+<>c__DisplayClass*.<GetTotal>b__*", "var total = Task.Run(() => SumLines(id)).Result;"),
            ]),
            new("orders/7/invoice", BlockingKind.TaskWait,
            [
                app.At("Services/OrderService.cs", "OrderService.Deliver", "sending.Wait();"),
                app.At("Services/OrderService.cs", "OrderService.SendInvoice", "Deliver(order);"),
                app.At("Controllers/OrdersController.cs", "OrdersController.Invoice", "_orders.SendInvoice(id);"),
            ]),

            // The invoice loads its order first: half of its time its threads wait there.
            new("orders/7/invoice", BlockingKind.TaskWait,
            [
                app.At("Services/OrderService.cs", "OrderService.LoadOrder", "var order = _repository.FindAsync(id).Result;"),
                app.At("Services/OrderService.cs", "OrderService.SendInvoice", "var order = LoadOrder(id);"),
                app.At("Controllers/OrdersController.cs", "OrdersController.Invoice", "_orders.SendInvoice(id);"),
            ]),
        ];
        using var cli = installedTool ? await DotnetBlockingTool.InstallAsync().TimeoutAfter(TimeSpan.FromSeconds(90)) : null;

        await using var server = await BlockedServer.StartAsync(app.ServerOptions);
        foreach (var route in chains.Select(c => c.Uri).Distinct())
        {
            server.Loop(route, WorkersPerRoute);
        }

        await server.WhenEveryLoopHasAnsweredAsync(FirstAnswers);
        // Side by side, as two terminals would run them: two EventPipe sessions on the same starved process.
        var stacksRun = RunAsync(cli?.Command, "stacks", "-p", $"{server.ProcessId}", "--format", "json", "--top", "10", "--requests-window", "1.5s");
        var waitsRun = RunAsync(cli?.Command, "waits", "-p", $"{server.ProcessId}", "--json", "--top", "10", "--duration", "1.5s");
        var stacks = await stacksRun;
        var waits = await waitsRun;

        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(stacks, Json)!;
        var sites = snapshot.BlockedPoolSites;
        output.WriteLine(string.Join('\n', sites.Select(s => s.Describe(snapshot.PoolThreadCount))));

        // A snapshot is an instant: a route whose requests were all queued for a thread at it has no parked thread to name
        // (the shortest route now and then). Such a route is looked for in one more snapshot, as a user would take one.
        bool NamedBy(IReadOnlyList<BlockingSite> candidates, IGrouping<string, BlockingChain> route) =>
            candidates.Any(s => route.Any(chain => s.Blocking.Kind == chain.Kind && chain.IsNamedBy(s, app.IsRelease)));
        if (chains.GroupBy(c => c.Route).Any(route => !NamedBy(sites, route)))
        {
            var again = JsonSerializer.Deserialize<StackSnapshot>(await RunAsync(cli?.Command, "stacks", "-p", $"{server.ProcessId}", "--format", "json", "--top", "10", "--requests-window", "1.5s"), Json)!;
            output.WriteLine("a route had no parked thread in that snapshot; one more:\n" + string.Join('\n', again.BlockedPoolSites.Select(s => s.Describe(again.PoolThreadCount))));
            sites = [.. sites, .. again.BlockedPoolSites];
        }

        var waitSites = JsonSerializer.Deserialize<WaitAnalysis>(waits, Json)!.Sites;
        output.WriteLine(string.Join('\n', waitSites.Select(s => s.Describe())));
        Assert.Contains(snapshot.Modules, m => m.Module == "Contoso.Orders" && m.IsApp);
        foreach (var route in chains.GroupBy(c => c.Route))
        {
            Assert.True(NamedBy(sites, route), $"no blocking site of stacks names {string.Join(" or ", route)}");
            Assert.True(waitSites.Any(s => route.Any(chain => s.Blocking?.Kind == chain.Kind && chain.IsNamedBy(s, app.IsRelease))),
                $"no wait site of waits names {string.Join(" or ", route)}");
        }

        // The fix each site says, from what the test knows of the app: the total's lines wait inside Task.Run, so their fix
        // is Task.Run's; every other chain's wait is on the request's own thread. A site with no app frame is left out:
        // only its stack says where it waits. Release keeps the Task.Run lambda's frame, not always the others'.
        var underTaskRun = chains.Single(c => c.Route == "orders/7/total");
        var (taskRunSites, requestThreadSites) = (0, 0);
        foreach (var site in sites.Where(s => s.AppFrames.Count > 0))
        {
            if (underTaskRun.Calls.Any(c => c.IsNamedBy(site.AppFrames[0])))
            {
                Assert.True(site.Fix == BlockingFrame.TaskRunFix, $"{site.Describe(snapshot.PoolThreadCount)}: {site.Fix}");
                taskRunSites++;
            }
            else if (chains.Any(chain => chain != underTaskRun && chain.Calls.Any(c => c.IsNamedBy(site.AppFrames[0]))))
            {
                Assert.True(site.Fix == BlockingFrame.FixFor(BlockingKind.TaskWait), $"{site.Describe(snapshot.PoolThreadCount)}: {site.Fix}");
                requestThreadSites++;
            }
        }

        Assert.True(taskRunSites > 0 && (app.IsRelease || requestThreadSites > 0), $"fixes checked on {taskRunSites} Task.Run sites and {requestThreadSites} request-thread sites");
    }

    [Theory]
    [InlineData("Debug")]
    [InlineData("Release")]
    public async Task Stacks_OnAMinimalApiPollingWithThreadSleep_NamesTheSleepsLine_OrTheInvokerAndRoute_AndWritesASpeedscopeFile(string configuration)
    {
        var app = FixtureApp.FabrikamStock(configuration);
        var chain = new BlockingChain("stock/chai", BlockingKind.Sleep,
        [
            app.At("Warehouse.cs", "Warehouse.CountOnHand", "Thread.Sleep(20);"),
            app.At("Program.cs", "Program+<>c.<<Main>$>b__*", "var count = warehouse.CountOnHand(sku);"),
        ]);
        var speedscope = Path.Combine(Path.GetTempPath(), $"stacks-{Guid.NewGuid():N}.speedscope.json");
        await using var server = await BlockedServer.StartAsync(app.ServerOptions);
        server.Loop(chain.Uri, 2 * WorkersPerRoute);
        await server.WhenEveryLoopHasAnsweredAsync(FirstAnswers);
        try
        {
            // Side by side, as two terminals would run them.
            var textRun = RunAsync(null, "stacks", "-p", $"{server.ProcessId}", "--requests-window", "1.5s");
            var jsonRun = RunAsync(null, "stacks", "-p", $"{server.ProcessId}", "--format", "speedscope", "-o", speedscope, "--requests-window", "0s");
            var text = await textRun;
            var json = await jsonRun;

            output.WriteLine(text);
            var headlines = text.Split('\n').SkipWhile(l => !l.StartsWith("Blocking sites", StringComparison.Ordinal)).Skip(1).TakeWhile(l => l.StartsWith("  ", StringComparison.Ordinal)).ToList();
            var first = headlines.FirstOrDefault(l => !l.StartsWith("    ", StringComparison.Ordinal)) ?? "";
            var blocking = chain.Calls[0];
            var inner = app.IsRelease ? chain.Calls : [blocking];
            Assert.True(inner.Any(c => first.Contains($"blocked in Thread.Sleep at {c.FileName}:{c.Line} `{c.Statement}` in ", StringComparison.Ordinal))
                    || (app.IsRelease && first.Contains("inlined into", StringComparison.Ordinal) && first.Contains($"GET /{chain.Route} (", StringComparison.Ordinal)),
                $"the first blocking site names neither {blocking} nor, in Release, the invoker and route: {first}");
            Assert.Contains(headlines, l => l.Trim() == $"fix: {BlockingFrame.FixFor(BlockingKind.Sleep)}");
            Assert.Contains(speedscope, json, StringComparison.Ordinal);
            SpeedscopeAssert.WellFormed(speedscope);
        }
        finally
        {
            File.Delete(speedscope);
        }
    }

    /// <summary>
    /// A small method the Release JIT inlines into its caller leaves no frame: the caller's frame holds its blocking call.
    /// The site names the inlined method's line first, then the frame it was inlined into at its call. Tiered compilation is
    /// off for this process, so that the JIT optimizes from the first call (as it does a hot path once it has run a while);
    /// with it on, the first requests' threads park in unoptimized code, where every method keeps its frame.
    /// </summary>
    [Fact]
    public async Task Stacks_OnAReleaseBuildWhoseJitInlinedTheBlockingMethodIntoItsCaller_NamesItsLine_AndTheFrameItWasInlinedInto()
    {
        var app = FixtureApp.ContosoOrders("Release");
        var blocking = app.At("Services/OrderService.cs", "OrderService.ItemsIn", "private static int ItemsIn(Task<IReadOnlyList<OrderLine>> lines) => lines.Result.Count;");
        var caller = app.At("Services/OrderService.cs", "OrderService+<>c__DisplayClass*.<CountItems>b__*", "var count = Task.Run(() => ItemsIn(_repository.GetLinesAsync(id))).Result;");
        var options = app.ServerOptions with
        {
            ExtraEnvironment = new Dictionary<string, string>(app.ServerOptions.ExtraEnvironment) { ["DOTNET_TieredCompilation"] = "0" },
        };
        await using var server = await BlockedServer.StartAsync(options);
        server.Loop(new Uri("orders/7/items", UriKind.Relative), WorkersPerRoute);
        await server.WhenEveryLoopHasAnsweredAsync(FirstAnswers);

        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(
            await RunAsync(null, "stacks", "-p", $"{server.ProcessId}", "--format", "json", "--top", "5", "--requests-window", "0s"), Json)!;

        var sites = snapshot.BlockedPoolSites;
        output.WriteLine(string.Join('\n', sites.Select(s => s.Describe(snapshot.PoolThreadCount))));
        Assert.True(
            sites.Any(s => s.Blocking.Kind == BlockingKind.TaskWait && s.AppFrames is [var frame, ..] && caller.IsNamedBy(frame) && frame.Inlined is { } inlined && blocking.IsNamedBy(inlined)),
            $"no site names {blocking}, inlined into {caller}");
    }

    private static async Task<string> RunAsync(string? installedTool, params string[] arguments)
    {
        var run = installedTool is null
            ? await DiagnoseCli.RunAsync(arguments)
            : await ChildProcess.RunAsync(new ChildProcessStart(installedTool, arguments) { WorkingDirectory = RepositoryPaths.Root }, TimeSpan.FromSeconds(30));
        Assert.True(run.ExitCode == 0, run.ToString());
        return run.Output;
    }
}
