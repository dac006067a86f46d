namespace DiagnosticScenarios.Tests.Analyzers;

/// <summary>
/// The fix turns each BAD scenario shape into its GOOD twin's: the awaited twin (with the handler's token), the awaited
/// task, <c>Task.Delay</c>; the handler async. Roslyn's testing library applies the fixes one by one and all at once, and
/// requires the result to compile and to equal the expected source.
/// </summary>
[StartsNext("a compilation for each fix, before and after it, on the processor")]
public sealed class AwaitInsteadFixTests
{
    private const string Database = """
        public sealed class MockDatabase
        {
            public string Query(TimeSpan delay) => "row";

            public Task<string> QueryAsync(TimeSpan delay, CancellationToken cancellationToken = default) => Task.FromResult("row");
        }

        """;

    [Fact]
    public Task SyncCall_BecomesTheAwaitedTwinWithTheActionsToken_AsInTaskAsyncWait() => Fix(
        """
        public sealed class StarvationController(MockDatabase database) : ControllerBase
        {
            [HttpGet("syncio")]
            public string SyncIo(CancellationToken cancellationToken)
            {
                {|DSB001:database.Query(TimeSpan.FromMilliseconds(500))|};
                return "success:syncio";
            }
        }
        """,
        """
        public sealed class StarvationController(MockDatabase database) : ControllerBase
        {
            [HttpGet("syncio")]
            public async Task<string> SyncIo(CancellationToken cancellationToken)
            {
                await database.QueryAsync(TimeSpan.FromMilliseconds(500), cancellationToken);
                return "success:syncio";
            }
        }
        """);

    [Fact]
    public Task DriverCalls_BecomeAwaitedTwins_AsInSqlAsync() => Fix(
        """
        public sealed class SqlController(DbConnection connection) : ControllerBase
        {
            [HttpGet("sync")]
            public string Sync(CancellationToken cancellationToken)
            {
                using var command = connection.CreateCommand();
                {|DSB001:connection.Open()|};
                {|DSB001:command.ExecuteNonQuery()|};
                return "success:sql-sync";
            }
        }
        """,
        """
        public sealed class SqlController(DbConnection connection) : ControllerBase
        {
            [HttpGet("sync")]
            public async Task<string> Sync(CancellationToken cancellationToken)
            {
                using var command = connection.CreateCommand();
                await connection.OpenAsync(cancellationToken);
                await command.ExecuteNonQueryAsync(cancellationToken);
                return "success:sql-sync";
            }
        }
        """);

    [Fact]
    public Task SemaphoreWait_InAnAsyncAction_BecomesAwaitedWaitAsync_AsInSemaphoreAsync() => Fix(
        """
        public sealed class ThrottleController : ControllerBase
        {
            private static readonly SemaphoreSlim Throttle = new(50, 50);

            [HttpGet("semaphore")]
            public async Task<string> Semaphore(CancellationToken cancellationToken)
            {
                {|DSB001:Throttle.Wait(cancellationToken)|};
                try
                {
                    await Task.Delay(200, cancellationToken);
                }
                finally
                {
                    Throttle.Release();
                }

                return "success:blocking-semaphore";
            }
        }
        """,
        """
        public sealed class ThrottleController : ControllerBase
        {
            private static readonly SemaphoreSlim Throttle = new(50, 50);

            [HttpGet("semaphore")]
            public async Task<string> Semaphore(CancellationToken cancellationToken)
            {
                await Throttle.WaitAsync(cancellationToken);
                try
                {
                    await Task.Delay(200, cancellationToken);
                }
                finally
                {
                    Throttle.Release();
                }

                return "success:blocking-semaphore";
            }
        }
        """);

    [Fact]
    public Task Result_BecomesAwait_AsInTaskAsyncWait() => Fix(
        """
        public sealed class StarvationController(MockDatabase database) : ControllerBase
        {
            [HttpGet("taskwait")]
            public string TaskWait()
            {
                _ = {|DSB002:database.QueryAsync(TimeSpan.FromMilliseconds(500)).Result|};
                return "success:taskwait";
            }
        }
        """,
        """
        public sealed class StarvationController(MockDatabase database) : ControllerBase
        {
            [HttpGet("taskwait")]
            public async Task<string> TaskWait()
            {
                _ = await database.QueryAsync(TimeSpan.FromMilliseconds(500));
                return "success:taskwait";
            }
        }
        """);

    [Fact]
    public Task GetAwaiterGetResultAndWait_BecomeAwait() => Fix(
        """
        public sealed class StarvationController(MockDatabase database) : ControllerBase
        {
            [HttpGet("getawaiterresult")]
            public string GetAwaiterResult()
            {
                {|DSB002:database.QueryAsync(TimeSpan.FromMilliseconds(500)).GetAwaiter().GetResult()|};
                {|DSB002:database.QueryAsync(TimeSpan.FromMilliseconds(500)).Wait()|};
                return {|DSB002:database.QueryAsync(TimeSpan.FromMilliseconds(500)).Result|}.ToUpperInvariant();
            }
        }
        """,
        """
        public sealed class StarvationController(MockDatabase database) : ControllerBase
        {
            [HttpGet("getawaiterresult")]
            public async Task<string> GetAwaiterResult()
            {
                await database.QueryAsync(TimeSpan.FromMilliseconds(500));
                await database.QueryAsync(TimeSpan.FromMilliseconds(500));
                return (await database.QueryAsync(TimeSpan.FromMilliseconds(500))).ToUpperInvariant();
            }
        }
        """);

    [Fact]
    public Task ThreadSleep_BecomesAwaitedTaskDelayWithTheToken() => Fix(
        """
        public sealed class StarvationController(MockDatabase database) : ControllerBase
        {
            [HttpGet("tasksleepwait")]
            public string TaskSleepWait(CancellationToken cancellationToken)
            {
                var query = database.QueryAsync(TimeSpan.FromMilliseconds(500));
                while (!query.IsCompleted)
                {
                    {|DSB003:Thread.Sleep(10)|};
                }

                return "success:tasksleepwait";
            }
        }
        """,
        """
        public sealed class StarvationController(MockDatabase database) : ControllerBase
        {
            [HttpGet("tasksleepwait")]
            public async Task<string> TaskSleepWait(CancellationToken cancellationToken)
            {
                var query = database.QueryAsync(TimeSpan.FromMilliseconds(500));
                while (!query.IsCompleted)
                {
                    await Task.Delay(10, cancellationToken);
                }

                return "success:tasksleepwait";
            }
        }
        """);

    [Fact]
    public Task VoidPageHandler_BecomesAsyncTask() => Fix(
        """
        public sealed class OrdersModel(MockDatabase database) : PageModel
        {
            public void OnGet()
            {
                {|DSB001:database.Query(TimeSpan.FromMilliseconds(500))|};
            }
        }
        """,
        """
        public sealed class OrdersModel(MockDatabase database) : PageModel
        {
            public async Task OnGet()
            {
                await database.QueryAsync(TimeSpan.FromMilliseconds(500));
            }
        }
        """);

    [Fact]
    public Task HelperMethod_BecomesAsync_AndTheActionThatCallsItAwaitsIt() => Fix(
        """
        public sealed class OrdersController(MockDatabase database) : ControllerBase
        {
            [HttpGet("orders")]
            public string Get() => Load();

            private string Load() => {|DSB001:database.Query(TimeSpan.FromMilliseconds(500))|};
        }
        """,
        """
        public sealed class OrdersController(MockDatabase database) : ControllerBase
        {
            [HttpGet("orders")]
            public async Task<string> Get() => await Load();

            private async Task<string> Load() => await database.QueryAsync(TimeSpan.FromMilliseconds(500));
        }
        """,
        reportedAtTheEnd: true);

    /// <summary>Awaiting in a caller that is not a handler would change what it does: the fix is not offered.</summary>
    [Fact]
    public Task NoFix_WhenTheMethodHasACallerThatIsNotAHandler()
    {
        const string Unfixable = """
            public sealed class OrdersController(MockDatabase database) : ControllerBase
            {
                [HttpGet("orders")]
                public string Get() => Load();

                internal void Warm() => _ = Load();

                private string Load() => {|DSB001:database.Query(TimeSpan.FromMilliseconds(500))|};
            }
            """;
        return Fix(Unfixable, Unfixable, reportedAtTheEnd: true);
    }

    [Fact]
    public Task MinimalApiLambda_BecomesAsync() => Fix(
        """
        public static class Endpoints
        {
            public static void Map(IEndpointRouteBuilder app) =>
                app.MapGet("/orders", (MockDatabase database) => {|DSB001:database.Query(TimeSpan.FromMilliseconds(500))|});
        }
        """,
        """
        public static class Endpoints
        {
            public static void Map(IEndpointRouteBuilder app) =>
                app.MapGet("/orders", async (MockDatabase database) => await database.QueryAsync(TimeSpan.FromMilliseconds(500)));
        }
        """);

    /// <summary>A DI factory and a constructor cannot await: the rule fires, no fix is offered.</summary>
    [Fact]
    public Task NoFix_InADependencyInjectionFactoryOrAConstructor()
    {
        const string Unfixable = """
            public sealed class Settings;

            public static class Registration
            {
                public static void Add(IServiceCollection services) =>
                    services.AddScoped(provider => new Settings { } is var settings && {|DSB002:provider.GetRequiredService<MockDatabase>().QueryAsync(TimeSpan.FromMilliseconds(500)).Result|} is not null ? settings : settings);
            }

            public sealed class OrdersController : ControllerBase
            {
                public OrdersController(MockDatabase database) => _ = {|DSB002:database.QueryAsync(TimeSpan.FromMilliseconds(500)).Result|};
            }
            """;
        return Fix(Unfixable, Unfixable);
    }

    private static Task Fix(string source, string fixedSource, bool reportedAtTheEnd = false)
    {
        const string Usings = RequestPathRuleTests.Usings + "using System.Data.Common;\n\n";
        return PackageVerifier.FixAsync(Usings + Database + source, Usings + Database + fixedSource, reportedAtTheEnd);
    }
}
