namespace DiagnosticScenarios.Tests.Analyzers;

/// <summary>
/// The shape rules (DSB007–DSB009) block a pool thread wherever they are written: they fire in a console app with no
/// ASP.NET Core, and their GOOD counterparts do not. And the waits that no longer block stay unflagged.
/// </summary>
public sealed class ShapeRuleTests
{
    private const string Usings = """
        using System;
        using System.Collections.Concurrent;
        using System.Threading;
        using System.Threading.Tasks;

        """;

    [Theory]
    [InlineData("_ = {|DSB007:Task.Run(() => Store.Query()).Result|};")]
    [InlineData("{|DSB007:Task.Run(() => Store.Query()).Wait()|};")]
    [InlineData("_ = {|DSB007:Task.Factory.StartNew(() => Store.Query()).GetAwaiter().GetResult()|};")]
    [InlineData("var cache = new ConcurrentDictionary<string, string>(); _ = cache.GetOrAdd(\"key\", key => {|DSB008:Store.QueryAsync().Result|});")]
    [InlineData("var cache = new ConcurrentDictionary<string, string>(); _ = cache.AddOrUpdate(\"key\", key => \"new\", (key, old) => {|DSB008:Store.QueryAsync().GetAwaiter().GetResult()|});")]
    [InlineData("using var timer = new Timer(_ => {|DSB009:Thread.Sleep(100)|}, null, 0, 1000);")]
    [InlineData("using var timer = new Timer(_ => {|DSB009:Store.QueryAsync().Wait()|}, null, 0, 1000);")]
    [InlineData("using var timer = new System.Timers.Timer(1000); timer.Elapsed += (sender, e) => {|DSB009:Store.Query()|};")]
    public Task ShapeRule_Fires_InAConsoleApp(string statement) =>
        PackageVerifier.AnalyzeAsync(Usings + RequestPathRuleTests.Store + Program(statement), OfflineReferences.Runtime);

    [Fact]
    public Task TimerRule_Fires_InACallbackNamedByAMethodGroup() =>
        PackageVerifier.AnalyzeAsync(Usings + RequestPathRuleTests.Store + """
            public static class Program
            {
                public static void Main()
                {
                    using var timer = new Timer(Tick, null, 0, 1000);
                }

                private static void Tick(object? state) => {|DSB009:Store.Query()|};
            }
            """, OfflineReferences.Runtime);

    [Theory]
    [InlineData("_ = await Task.Run(() => \"cpu\");")]
    [InlineData("var cache = new ConcurrentDictionary<string, Lazy<Task<string>>>(); _ = await cache.GetOrAdd(\"key\", key => new Lazy<Task<string>>(() => Store.QueryAsync())).Value;")]
    [InlineData("using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1)); while (await timer.WaitForNextTickAsync()) { _ = await Store.QueryAsync(); }")]
    public Task ShapeRule_StaysQuiet_OnTheGoodTwin(string statement) =>
        PackageVerifier.AnalyzeAsync(Usings + RequestPathRuleTests.Store + AsyncProgram(statement), OfflineReferences.Runtime);

    /// <summary>A wait on a task the code has already awaited or checked, or a wait of zero, does not block.</summary>
    [Theory]
    [InlineData("var task = Store.QueryAsync(); await Task.WhenAll(task); return task.Result;")]
    [InlineData("var task = Store.QueryAsync(); await task; return task.Result;")]
    [InlineData("var task = Store.QueryAsync(); {|DSB002:task.Wait()|}; return task.Result;")]
    [InlineData("var task = Store.QueryAsync(); return task.IsCompletedSuccessfully ? task.Result : await task;")]
    [InlineData("_ = Store.Gate.Wait(0); return \"ok\";")]
    [InlineData("Thread.Sleep(0); return \"ok\";")]
    [InlineData("using var stream = new System.IO.MemoryStream(); _ = stream.Read(new byte[4], 0, 4); return \"ok\";")]
    [InlineData("return Task.FromResult(\"row\").Result;")]
    public Task RequestPathRule_StaysQuiet_WhenTheWaitDoesNotBlock(string body) =>
        PackageVerifier.AnalyzeAsync(RequestPathRuleTests.Usings + """
            public static class Store
            {
                public static readonly SemaphoreSlim Gate = new(1);

                public static Task<string> QueryAsync() => Task.FromResult("row");
            }

            public sealed class OrdersController : ControllerBase
            {
                [HttpGet("orders")]
                public async Task<string> Get()
                {
            """ + body + """

                }
            }
            """);

    /// <summary>A shape rule names the shape where requests run too, in place of the request-path rule for the same wait.</summary>
    [Fact]
    public Task WaitOnTaskRun_IsReportedOnce_InAnAction() =>
        PackageVerifier.AnalyzeAsync(RequestPathRuleTests.Usings + RequestPathRuleTests.Store + """
            public sealed class OrdersController : ControllerBase
            {
                [HttpGet("orders")]
                public string Get() => {|DSB007:Task.Run(() => Store.QueryAsync()).Result|};
            }
            """);

    /// <summary>Task.Run's work on a dedicated thread (LongRunning) holds no pool thread.</summary>
    [Fact]
    public Task FakeAsyncRule_StaysQuiet_ForLongRunningWork() =>
        PackageVerifier.AnalyzeAsync(RequestPathRuleTests.Usings + RequestPathRuleTests.Store + """
            public sealed class OrdersController : ControllerBase
            {
                [HttpGet("orders")]
                public Task Get() => Task.Factory.StartNew(() => Store.Query(), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            }
            """);

    private static string Program(string statement) => $$"""
        public static class Program
        {
            public static void Main()
            {
                {{statement}}
            }
        }
        """;

    private static string AsyncProgram(string statement) => $$"""
        public static class Program
        {
            public static async Task Main()
            {
                {{statement}}
            }
        }
        """;
}
