using System.Globalization;
using System.Net.Sockets;
using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.BlockingAnalysis;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.DotnetBlocking;

/// <summary>
/// What production hands over instead of a process id: a trace dotnet-trace recorded, and a diagnostic port the app's
/// runtime connects to (a sidecar that shares only the socket's folder with the app). One starved Release build of a
/// fixture app serves every test: loops of requests park its pool threads in Thread.Sleep and in GetResult.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class ProductionSourcesTests(StarvedStockApp app, ITestOutputHelper output) : IClassFixture<StarvedStockApp>
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    [Fact]
    public async Task Stacks_OnADotnetTraceCollectFile_NamesTheSleepsLineAndFix_InText_Json_AndSpeedscope()
    {
        var trace = await app.CollectedTraceAsync();
        var speedscope = Path.Combine(app.Folder, "collect.speedscope.json");

        // Side by side, as two terminals would run them.
        var textRun = DiagnoseCli.RunAsync("stacks", trace);
        var jsonRun = DiagnoseCli.RunAsync("stacks", trace, "--json", "--top", "10");
        var speedscopeRun = DiagnoseCli.RunAsync("stacks", trace, "--format", "speedscope", "-o", speedscope);
        var (text, json, written) = (await textRun, await jsonRun, await speedscopeRun);

        output.WriteLine(text.Output);
        Assert.True(text.ExitCode == 0 && json.ExitCode == 0 && written.ExitCode == 0, $"{text}\n{json}\n{written}");
        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(json.Output, Json)!;
        Assert.Equal(app.ProcessId, snapshot.ProcessId);
        Assert.True(snapshot.Samples > 100, $"{snapshot.Samples} samples in a 3 s trace");
        var site = snapshot.BlockedPoolSites.FirstOrDefault(s => s.Blocking.Kind == BlockingKind.Sleep && app.Sleep.IsNamedBy(s, release: true));
        Assert.True(site is not null, $"no site names {app.Sleep}:\n{string.Join('\n', snapshot.BlockedPoolSiteLines)}");
        Assert.InRange(site.Groups.Max(g => g.SampledIn), 1, snapshot.Samples);

        Assert.Contains($"{trace} (process {app.ProcessId}): ", text.Output, StringComparison.Ordinal);
        var lines = text.Output.Split('\n').Select(l => l.TrimEnd()).ToList();
        Assert.Contains(lines, l => l.Trim() == $"fix: {BlockingFrame.FixFor(BlockingKind.Sleep)}");
        Assert.Contains(lines, l => l.StartsWith("    seen in ", StringComparison.Ordinal) && l.EndsWith($" of {snapshot.Samples} samples", StringComparison.Ordinal));
        SpeedscopeAssert.WellFormed(speedscope);
    }

    [Fact]
    public async Task Stacks_OnATraceWithSymbols_ReadsTheAppsModuleAndPdbFromThatFolder()
    {
        var trace = await app.CollectedTraceAsync();
        var symbols = Directory.CreateDirectory(Path.Combine(app.Folder, "symbols")).FullName;
        foreach (var file in new[] { "Fabrikam.Stock.dll", "Fabrikam.Stock.pdb", "Fabrikam.Stock.deps.json" })
        {
            File.Copy(Path.Combine(app.AppFolder, file), Path.Combine(symbols, file), overwrite: true);
        }

        var run = await DiagnoseCli.RunAsync("stacks", trace, "--symbols", symbols, "--json", "--top", "10");

        Assert.True(run.ExitCode == 0, run.ToString());
        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(run.Output, Json)!;
        var module = snapshot.Modules.Single(m => m.Module == "Fabrikam.Stock");
        Assert.True(module.IsApp && module.Path == Path.Combine(symbols, "Fabrikam.Stock.dll"), $"{module}");
        Assert.Contains(snapshot.BlockedPoolSites, s => s.Blocking.Kind == BlockingKind.Sleep && app.Sleep.IsNamedBy(s, release: true));
    }

    [Fact]
    public async Task Stacks_OnATraceCutShort_ExitsWithOneLineSayingSo()
    {
        var bytes = await File.ReadAllBytesAsync(await app.CollectedTraceAsync());
        var trace = Path.Combine(app.Folder, "cut.nettrace");
        await File.WriteAllBytesAsync(trace, bytes[..(bytes.Length / 2)]);

        var run = await DiagnoseCli.RunAsync("stacks", trace);

        Assert.Equal(1, run.ExitCode);
        Assert.StartsWith($"error: {trace} is not a readable .nettrace", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
    }

    [Fact]
    public async Task StacksAndWaits_ListeningOnTheDiagnosticPortTheAppConnectsTo_NameTheSleepAndTheGetResult_WithoutItsProcessId()
    {
        var stacks = await DiagnoseCli.RunAsync("stacks", "--diagnostic-port", app.Port, "--json", "--top", "10");
        var waits = await DiagnoseCli.RunAsync("waits", "--diagnostic-port", app.Port, "--duration", "3s", "--json", "--top", "10");

        Assert.True(stacks.ExitCode == 0, stacks.ToString());
        Assert.True(waits.ExitCode == 0, waits.ToString());
        var snapshot = JsonSerializer.Deserialize<StackSnapshot>(stacks.Output, Json)!;
        output.WriteLine(string.Join('\n', snapshot.BlockedPoolSiteLines));
        Assert.Equal(app.ProcessId, snapshot.ProcessId);
        Assert.Contains(snapshot.BlockedPoolSites, s => s.Blocking.Kind == BlockingKind.Sleep && app.Sleep.IsNamedBy(s, release: true));
        var analysis = JsonSerializer.Deserialize<WaitAnalysis>(waits.Output, Json)!;
        output.WriteLine(string.Join('\n', analysis.Sites.Select(s => s.Describe())));
        Assert.Equal(app.ProcessId, analysis.ProcessId);
        Assert.Contains(analysis.Sites, s => s.Blocking?.Kind == BlockingKind.GetAwaiterGetResult && app.History.IsNamedBy(s, release: true));
    }

    [Fact]
    public async Task Watch_ListeningOnTheDiagnosticPortTheAppConnectsTo_ReadsItsCountersUntilItsTimeout()
    {
        var run = await DiagnoseCli.RunAsync("watch", "--diagnostic-port", app.Port, "--timeout", "2s");

        output.WriteLine(run.ToString());
        Assert.Contains($"Watching the process connected to {app.Port}", run.Error, StringComparison.Ordinal);
        Assert.Contains(run.Error.Split('\n'), l => l.StartsWith("  threads ", StringComparison.Ordinal));
        // Its loops may starve it within the seconds read, or not: either way the report is the watch's.
        Assert.True(run.ExitCode == 3 ? run.Output.StartsWith("No starvation within", StringComparison.Ordinal) : run.ExitCode == 0 && run.Output.Contains("Warehouse.cs", StringComparison.Ordinal), run.ToString());
    }

    [Fact]
    public async Task Stacks_OnADiagnosticPortNoRuntimeConnectsTo_ListensInPlaceOfAStaleSocket_AndGivesUpAtItsConnectTimeout_WithOneLine()
    {
        var port = Path.Combine(app.Folder, "nobody.sock");
        // What a listener killed outright leaves: the socket's file, nothing listening on it (bound here, never listening).
        using var stale = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        stale.Bind(new UnixDomainSocketEndPoint(port));

        var run = await DiagnoseCli.RunAsync("stacks", "--diagnostic-port", port, "--connect-timeout", "1s");

        Assert.Equal(1, run.ExitCode);
        Assert.StartsWith($"error: No runtime connected to {port} within 1 s", DiagnoseCli.OneLine(run.Error), StringComparison.Ordinal);
        Assert.False(File.Exists(port), "the socket was left behind");
    }
}

/// <summary>
/// Fabrikam.Stock, Release, started with <c>DOTNET_DiagnosticPorts</c> naming a socket in a folder of its own, its pool
/// threads held by loops of requests in Thread.Sleep (stock) and in GetResult (history).
/// </summary>
public sealed class StarvedStockApp : IAsyncLifetime
{
    private static readonly TimeSpan FirstAnswers = TimeSpan.FromSeconds(30);
    private readonly FixtureApp _app = FixtureApp.FabrikamStock("Release");
    private BlockedServer? _server;
    private readonly Lock _collecting = new();
    private Task<string>? _collected;

    public string Folder { get; } = Directory.CreateTempSubdirectory("blocking-sources-").FullName;

    public string Port => Path.Combine(Folder, "port.sock");

    /// <summary>The folder the app runs from, its modules and PDBs in it.</summary>
    public string AppFolder => Path.GetDirectoryName(_app.ServerOptions.AppPath)!;

    public int ProcessId => _server!.ProcessId;

    internal BlockingChain Sleep => new("stock/chai", BlockingKind.Sleep,
    [
        _app.At("Warehouse.cs", "Warehouse.CountOnHand", "Thread.Sleep(20);"),
        _app.At("Program.cs", "Program+<>c.<<Main>$>b__*", "var count = warehouse.CountOnHand(sku);"),
    ]);

    internal BlockingChain History => new("stock/chai/history", BlockingKind.GetAwaiterGetResult,
    [
        _app.At("Program.cs", "Program+<>c.<<Main>$>b__*", "var moves = warehouse.LoadHistoryAsync(sku).GetAwaiter().GetResult();"),
    ]);

    /// <summary>
    /// A trace of 3 s that <c>dotnet-trace collect</c> recorded of the app with its default profile, recorded by the first
    /// test that asks; the test that cuts it short reads its own copy.
    /// </summary>
    public Task<string> CollectedTraceAsync()
    {
        lock (_collecting)
        {
            return _collected ??= CollectAsync();
        }
    }

    public async Task InitializeAsync()
    {
        var options = _app.ServerOptions with
        {
            ExtraEnvironment = new Dictionary<string, string>(_app.ServerOptions.ExtraEnvironment) { ["DOTNET_DiagnosticPorts"] = $"{Port},nosuspend" },
        };
        _server = await BlockedServer.StartAsync(options);
        _server.Loop(Sleep.Uri, 4);
        _server.Loop(History.Uri, 3);
        await _server.WhenEveryLoopHasAnsweredAsync(FirstAnswers);
    }

    private async Task<string> CollectAsync()
    {
        var trace = Path.Combine(Folder, "collect.nettrace");
        var collect = await DotnetTools.RunAsync("dotnet-trace",
            ["collect", "-p", ProcessId.ToString(CultureInfo.InvariantCulture), "--duration", "00:00:00:03", "-o", trace], TimeSpan.FromSeconds(60));
        Assert.True(collect.ExitCode == 0 && File.Exists(trace), collect.ToString());
        return trace;
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
