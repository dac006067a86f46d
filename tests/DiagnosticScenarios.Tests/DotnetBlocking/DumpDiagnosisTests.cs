using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.BlockingAnalysis;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// <c>stacks FILE</c> on dumps of an app that is not this one (a Release build of tests/fixtures/Contoso.Orders): the same
/// sites, lines and fixes as a live capture, and what only a dump shows, the async method a blocked thread's task waits on
/// and the await it is suspended at. One starved process and one dump for the class.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class DumpDiagnosisTests(StarvedFixtureDump dump, ITestOutputHelper output) : IClassFixture<StarvedFixtureDump>
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    [Fact]
    public async Task Stacks_OfADumpWrittenByWriteDump_NamesTheBlockingLineTheFixAndTheAwaitedAsyncMethod()
    {
        var run = await DiagnoseCli.RunAsync("stacks", dump.Path, "--json");

        Assert.True(run.ExitCode == 0, run.ToString());
        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(run.Output, Json)!;
        output.WriteLine(string.Join('\n', snapshot.BlockedPoolSiteLines));
        var site = snapshot.BlockedPoolSites.FirstOrDefault(s => s.Blocking.Kind == dump.Chain.Kind && dump.Chain.IsNamedBy(s, release: true));
        Assert.True(site is not null, $"no site names {dump.Chain}");
        Assert.Equal(BlockingFrame.FixFor(BlockingKind.TaskWait), site.Fix);
        AssertAwaitsFindAsync(site.Awaits);
    }

    [Fact]
    public async Task Stacks_OfADump_InText_SaysWhichAsyncMethodAndAwaitTheThreadsWaitFor()
    {
        var run = await DiagnoseCli.RunAsync("stacks", dump.Path);

        output.WriteLine(run.Output);
        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.StartsWith($"Dump {dump.Path} (process ", run.Output, StringComparison.Ordinal);
        Assert.Contains($"waits for OrderRepository.FindAsync at OrderRepository.cs:{dump.Await.Line} `{dump.Await.Statement}`, awaiting Task.Delay", run.Output, StringComparison.Ordinal);
        // A dump is one moment: no count of samples, as a trace file's sites carry.
        Assert.DoesNotContain("samples", run.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Stacks_OfADump_AsSpeedscope_IsAWellFormedFileOfItsThreads()
    {
        var file = System.IO.Path.Combine(dump.Folder, "dump.speedscope.json");

        var run = await DiagnoseCli.RunAsync("stacks", dump.Path, "--format", "speedscope", "-o", file);

        Assert.True(run.ExitCode == 0, run.ToString());
        SpeedscopeAssert.WellFormed(file);
        Assert.Contains($"Dump {dump.Path}", await File.ReadAllTextAsync(file), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Stacks_OfADump_NamesEveryAsyncMethodOfTheAwaitedChain_InnermostFirst()
    {
        var run = await DiagnoseCli.RunAsync("stacks", dump.Path, "--json", "--top", "10");

        Assert.True(run.ExitCode == 0, run.ToString());
        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(run.Output, Json)!;
        output.WriteLine(string.Join('\n', snapshot.BlockedPoolSiteLines));
        var site = snapshot.BlockedPoolSites.FirstOrDefault(s => s.Blocking.Kind == dump.Invoice.Kind && dump.Invoice.IsNamedBy(s, release: true));
        Assert.True(site is not null, $"no site names {dump.Invoice}");
        Assert.NotNull(site.Awaits);
        Assert.Equal("Task.Delay", site.Awaits.Awaiting);
        Assert.Equal(
            dump.InvoiceAwaits.Select(a => (a.Method, (string?)a.FileName, a.Line, (string?)a.Statement)),
            site.Awaits.Chain.Select(f => (f.Method, f.Await?.FileName, f.Await?.Line ?? 0, f.Await?.Text)));
    }

    // The app's files the dump names are still on this disk: the module must be read from --symbols, not from its old path.
    [Fact]
    public async Task Stacks_OfADumpWithSymbols_ReadsTheAppsModuleAndPdbFromThatFolder()
    {
        var symbols = Directory.CreateDirectory(System.IO.Path.Combine(dump.Folder, "symbols")).FullName;
        var appFolder = System.IO.Path.GetDirectoryName(dump.App.ServerOptions.AppPath)!;
        foreach (var file in new[] { "Contoso.Orders.dll", "Contoso.Orders.pdb", "Contoso.Orders.deps.json" })
        {
            File.Copy(System.IO.Path.Combine(appFolder, file), System.IO.Path.Combine(symbols, file), overwrite: true);
        }

        var run = await DiagnoseCli.RunAsync("stacks", dump.Path, "--symbols", symbols, "--json");

        Assert.True(run.ExitCode == 0, run.ToString());
        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(run.Output, Json)!;
        var module = snapshot.Modules.Single(m => m.Module == "Contoso.Orders");
        Assert.True(module.IsApp && module.Path == System.IO.Path.Combine(symbols, "Contoso.Orders.dll"), $"{module}");
        Assert.Contains(snapshot.BlockedPoolSites, s => s.Blocking.Kind == dump.Chain.Kind && dump.Chain.IsNamedBy(s, release: true));
    }

    [Fact]
    public async Task Stacks_OfADumpCutShort_ExitsWithOneLineSayingSo()
    {
        var cut = System.IO.Path.Combine(dump.Folder, "cut.core");
        await using (var source = File.OpenRead(dump.Path))
        await using (var target = File.Create(cut))
        {
            var buffer = new byte[4 * 1024 * 1024];
            await source.ReadExactlyAsync(buffer);
            await target.WriteAsync(buffer);
        }

        var run = await DiagnoseCli.RunAsync("stacks", cut);

        Assert.Equal(1, run.ExitCode);
        Assert.StartsWith($"error: {cut} is cut short: its headers describe ", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Stacks_OfAFileThatIsNotADump_ExitsWithOneLineSayingSo()
    {
        var text = System.IO.Path.Combine(dump.Folder, "notes.txt");
        await File.WriteAllTextAsync(text, "not a dump\n");

        var run = await DiagnoseCli.RunAsync("stacks", text);

        Assert.Equal(1, run.ExitCode);
        Assert.Equal($"error: {text} is not a core dump: it is not an ELF core (what dotnet-dump collect and createdump write on Linux), nor a minidump.", DiagnoseCli.OneLine(run.Error));
    }

    [GdbFact]
    public async Task Stacks_OfADumpOfAProcessWithoutDotNet_ExitsWithOneLineSayingSo()
    {
        using var sleeper = System.Diagnostics.Process.Start("sleep", "30");
        var core = System.IO.Path.Combine(dump.Folder, "native");
        var gcore = await ChildProcess.RunAsync(new ChildProcessStart("gcore", ["-o", core, sleeper.Id.ToString(CultureInfo.InvariantCulture)]), TimeSpan.FromSeconds(30));
        sleeper.Kill();
        Assert.True(gcore.ExitCode == 0, gcore.ToString());

        var run = await DiagnoseCli.RunAsync("stacks", $"{core}.{sleeper.Id}");

        Assert.Equal(1, run.ExitCode);
        Assert.Equal($"error: {core}.{sleeper.Id} is a dump of a process with no .NET runtime loaded: there are no managed threads to read.", DiagnoseCli.OneLine(run.Error));
    }

    [Fact]
    public async Task Stacks_OfADotnetDumpHeapDump_NamesTheSameSiteAndAwait()
    {
        var path = System.IO.Path.Combine(dump.Folder, "dotnet-dump.core");
        var collect = await DotnetTools.RunAsync("dotnet-dump", ["collect", "-p", dump.ProcessId.ToString(CultureInfo.InvariantCulture), "--type", "Heap", "-o", path], TimeSpan.FromSeconds(60));
        Assert.True(collect.ExitCode == 0, collect.ToString());

        var run = await DiagnoseCli.RunAsync("stacks", path, "--json");

        Assert.True(run.ExitCode == 0, run.ToString());
        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(run.Output, Json)!;
        output.WriteLine(string.Join('\n', snapshot.BlockedPoolSiteLines));
        var site = snapshot.BlockedPoolSites.FirstOrDefault(s => s.Blocking.Kind == dump.Chain.Kind && dump.Chain.IsNamedBy(s, release: true));
        Assert.True(site is not null, $"no site names {dump.Chain}");
        AssertAwaitsFindAsync(site.Awaits);
    }

    private void AssertAwaitsFindAsync(AwaitedTask? awaits)
    {
        Assert.NotNull(awaits);
        Assert.Equal("Task.Delay", awaits.Awaiting);
        var innermost = Assert.Single(awaits.Chain);
        Assert.Equal("OrderRepository.FindAsync", innermost.Method);
        Assert.Equal(("OrderRepository.cs", dump.Await.Line, dump.Await.Statement), (innermost.Await?.FileName, innermost.Await?.Line, innermost.Await?.Text));
    }
}

/// <summary>
/// A Release build of Contoso.Orders with pool threads held in <c>GET /orders/7</c>'s <c>.Result</c> on the repository's
/// async load, and a heap dump of it written by <c>DiagnosticsClient.WriteDump</c> (as <c>watch --dump</c> writes one) into
/// a folder of its own, deleted with it.
/// </summary>
public sealed class StarvedFixtureDump : IAsyncLifetime
{
    private const int Workers = 4;
    private BlockedServer? _server;

    internal FixtureApp App { get; } = FixtureApp.ContosoOrders("Release");

    internal BlockingChain Chain => new("orders/7", BlockingKind.TaskWait,
    [
        App.At("Services/OrderService.cs", "OrderService.LoadOrder", "var order = _repository.FindAsync(id).Result;"),
        App.At("Services/OrderService.cs", "OrderService.GetOrder", "var order = LoadOrder(id);"),
        App.At("Controllers/OrdersController.cs", "OrdersController.Get", "var order = _orders.GetOrder(id);"),
    ]);

    /// <summary>The await the repository's load is suspended at.</summary>
    internal Call Await => App.At("Data/OrderRepository.cs", "OrderRepository.FindAsync", "await Task.Delay(_latency);");

    /// <summary><c>GET /orders/7/invoice</c>'s wait on the invoice's sending, two async methods deep.</summary>
    internal BlockingChain Invoice => new("orders/7/invoice", BlockingKind.TaskWait,
    [
        App.At("Services/OrderService.cs", "OrderService.Deliver", "sending.Wait();"),
        App.At("Services/OrderService.cs", "OrderService.SendInvoice", "Deliver(order);"),
        App.At("Controllers/OrdersController.cs", "OrdersController.Invoice", "_orders.SendInvoice(id);"),
    ]);

    /// <summary>The awaits the invoice's sending is suspended at, innermost first.</summary>
    internal Call[] InvoiceAwaits =>
    [
        App.At("Services/InvoiceSender.cs", "InvoiceSender.PostAsync", "await Task.Delay(_latency);"),
        App.At("Services/InvoiceSender.cs", "InvoiceSender.SendAsync", "await PostAsync(body);"),
    ];

    public string Folder { get; } = Directory.CreateTempSubdirectory("dumps-").FullName;

    public string Path { get; private set; } = "";

    public int ProcessId => _server!.ProcessId;

    public async Task InitializeAsync()
    {
        // The invoice's sending outlasts the order's load before it, so its threads spend most of each request in Deliver.
        var options = App.ServerOptions with
        {
            ExtraEnvironment = new Dictionary<string, string>(App.ServerOptions.ExtraEnvironment) { ["Mail__LatencyMs"] = "1500" },
        };
        _server = await BlockedServer.StartAsync(options);
        _server.Loop(Chain.Uri, Workers);
        _server.Loop(Invoice.Uri, 3);
        await _server.WhenEveryLoopHasAnsweredAsync(TimeSpan.FromSeconds(30));
        // A loop that has just answered has sent its next request, which loads its order first: past that load, in Deliver.
        await Task.Delay(TimeSpan.FromMilliseconds(600));
        Path = await Task.Run(() => ProcessDumps.Write(_server.ProcessId, Folder)).TimeoutAfter(TimeSpan.FromSeconds(60));
    }

    public async Task DisposeAsync()
    {
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }

        Directory.Delete(Folder, recursive: true);
    }
}

/// <summary>A test that makes a core dump of a process without .NET with gdb's gcore.</summary>
public sealed class GdbFactAttribute : FactAttribute
{
    public GdbFactAttribute([CallerMemberName] string test = "") =>
        Requirements.SkipUnless(this, Requirements.OnPath("gcore") is not null, "needs gdb's gcore on PATH: apt-get install gdb", test);
}
