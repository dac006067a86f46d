using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.BlockingAnalysis;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// <c>watch</c> on an app that is not this one (a Release build of tests/fixtures/Contoso.Orders, nothing in it that helps
/// the tool): it reads the runtime's counters over EventPipe until the starvation rule fires, then names the blocking code.
/// This app's own runs (fires under taskwait, stays quiet under taskasyncwait) are in the observed runs.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class WatchTests(ITestOutputHelper output)
{
    // Enough requests that the pool, adding a few threads a second, stays behind them for longer than the rule's window.
    private const int Workers = 120;
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    [Fact]
    public async Task Watch_OnAFixtureAppStarvedByABlockingService_FiresAndNamesTheBlockingLineOrTheRoute()
    {
        var app = FixtureApp.ContosoOrders("Release");
        var chain = new BlockingChain("orders/7", BlockingKind.TaskWait,
        [
            app.At("Services/OrderService.cs", "OrderService.LoadOrder", "var order = _repository.FindAsync(id).Result;"),
            app.At("Services/OrderService.cs", "OrderService.GetOrder", "var order = LoadOrder(id);"),
            app.At("Controllers/OrdersController.cs", "OrdersController.Get", "var order = _orders.GetOrder(id);"),
        ]);
        await using var server = await BlockedServer.StartAsync(app.ServerOptions);

        // The watch starts first, as a user starts it on a healthy app; the load starts once it says it is watching (its
        // session is on), before its first second is read, so the rule's window sees the thread count climb from the start.
        await using var watch = await DiagnoseCli.StartWatchingAsync(server.ProcessId, TimeSpan.FromSeconds(30));
        server.Loop(chain.Uri, Workers);
        var run = await watch.WaitForExitAsync().TimeoutAfter(TimeSpan.FromSeconds(60));

        output.WriteLine(run.Output);
        Assert.True(run.ExitCode == 0, run.ToString());
        var result = JsonSerializer.Deserialize<WatchResult>(run.Output, Json)!;
        Assert.True(result.Starved, result.Verdict.Reason);
        var top = result.Snapshot!.TopBlockedPoolSite();
        Assert.NotNull(top);
        Assert.True(top.Blocking.Kind == chain.Kind && chain.IsNamedBy(top, app.IsRelease),
            $"the top site names neither {chain} nor the invoker and route: {top.Describe(result.Snapshot.PoolThreadCount)}");
    }

    [Fact]
    public async Task WatchWithDump_WritesADumpAtTheMomentOfStarvation_WhichStacksReadsBackToTheSameSiteAndItsAwait()
    {
        var app = FixtureApp.ContosoOrders("Release");
        var chain = new BlockingChain("orders/7", BlockingKind.TaskWait,
        [
            app.At("Services/OrderService.cs", "OrderService.LoadOrder", "var order = _repository.FindAsync(id).Result;"),
            app.At("Services/OrderService.cs", "OrderService.GetOrder", "var order = LoadOrder(id);"),
            app.At("Controllers/OrdersController.cs", "OrdersController.Get", "var order = _orders.GetOrder(id);"),
        ]);
        var folder = Directory.CreateTempSubdirectory("watch-dumps-").FullName;
        try
        {
            await using var server = await BlockedServer.StartAsync(app.ServerOptions);
            await using var watch = await DiagnoseCli.StartWatchingAsync(server.ProcessId, TimeSpan.FromSeconds(30), "--dump", folder);
            server.Loop(chain.Uri, Workers);
            var run = await watch.WaitForExitAsync().TimeoutAfter(TimeSpan.FromSeconds(60));

            Assert.True(run.ExitCode == 0, run.ToString());
            var result = JsonSerializer.Deserialize<WatchResult>(run.Output, Json)!;
            Assert.True(result.DumpFile is { } written && File.Exists(written) && Path.GetDirectoryName(written) == folder, $"no dump in {folder}: {result.DumpFile}");
            var read = await DiagnoseCli.RunAsync("stacks", result.DumpFile!, "--json");
            Assert.True(read.ExitCode == 0, read.ToString());
            var snapshot = JsonSerializer.Deserialize<StackSnapshot>(read.Output, Json)!;
            output.WriteLine(string.Join('\n', snapshot.BlockedPoolSiteLines));
            var top = snapshot.TopBlockedPoolSite();
            Assert.NotNull(top);
            Assert.True(top.Blocking.Kind == chain.Kind && chain.IsNamedBy(top, app.IsRelease),
                $"the dump's top site names neither {chain} nor the invoker and route: {top.Describe(snapshot.PoolThreadCount)}");
            Assert.Equal("OrderRepository.FindAsync", top.Awaits?.Chain is [var innermost, ..] ? innermost.Method : null);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    /// <summary>
    /// The runtime serves one metrics session at a time: a second gets no counter, which must be said at once rather than
    /// waiting out the whole timeout and reporting "no starvation". A second watch on the same process stands in for
    /// dotnet-counters or an agent.
    /// </summary>
    [Fact]
    public async Task Watch_WhileAnotherToolReadsTheProcesssMetrics_ExitsWithOneLineSayingSo_InsteadOfWaitingOutItsTimeout()
    {
        var app = FixtureApp.ContosoOrders("Release");
        await using var server = await BlockedServer.StartAsync(app.ServerOptions);
        await using var first = await DiagnoseCli.StartWatchingAsync(server.ProcessId, TimeSpan.FromSeconds(60));

        // A timeout far beyond the CLI helper's own bound of 30 s: a watch that waited it out would fail this test by that
        // bound, with no clock read here.
        var second = await DiagnoseCli.RunAsync("watch", "-p", server.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture), "--timeout", "10m");

        output.WriteLine(second.ToString());
        Assert.Equal(1, second.ExitCode);
        // Its progress line first (its session was on), then the one line of the error.
        var lines = second.Error.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(2, lines.Length);
        Assert.StartsWith("Watching process ", lines[0], StringComparison.Ordinal);
        Assert.StartsWith($"error: Cannot watch process {server.ProcessId}: another tool", lines[1], StringComparison.Ordinal);
    }

    [Fact]
    public async Task Watch_ForAProcessIdThatIsNotRunning_ExitsWithOneLineSayingSo()
    {
        var run = await DiagnoseCli.RunAsync("watch", "-p", "2147483000", "--timeout", "5s");

        Assert.Equal(1, run.ExitCode);
        Assert.StartsWith("error: No process has id 2147483000:", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }
}
