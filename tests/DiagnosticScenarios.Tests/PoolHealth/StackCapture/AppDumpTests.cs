using System.Net;
using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.DotnetBlocking;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.StackCapture;

/// <summary>
/// <c>POST /api/threadpool/stacks?dump=true</c>: the app writes a heap dump of itself before the capture and names it; a
/// second asked for while the first is written is refused with a ProblemDetails, not written beside it. The dump, read
/// back by <c>dotnet-blocking stacks</c>, names the async method each family's sync-over-async scenario waits for.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class AppDumpTests(ITestOutputHelper output)
{
    private const int DelayMs = 20000;
    private const int PerScenario = 2;
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    // Each family's sync-over-async action, and what its threads' task waits for: the mock database's and the settings
    // store's async loads, each at its Task.Delay; SqlClient's command, whose task its I/O callbacks complete.
    private static readonly (string Route, string Action, string? AwaitedMethod)[] Scenarios =
    [
        ("api/diagscenario/taskwait", "StarvationScenariosController.TaskWait", "MockDatabase.QueryAsync"),
        ("api/blocking/difactory", "DiFactoryScenarios+<>c.<AddTenantSettings>b__0_0", "TenantSettingsStore.LoadAsync"),
        ("api/sqlscenario/wait", "SqlScenarioController.Wait", null),
    ];

    [Fact]
    public async Task CaptureWithDump_WritesOneDump_ASecondAskedForMeanwhileIsA409_AndTheDumpNamesWhatEachFamilyWaitsFor()
    {
        var folder = Directory.CreateTempSubdirectory("app-dumps-").FullName;
        try
        {
            await using var app = await HealthApp.StartAsync(new Dictionary<string, string> { ["StackCapture__DumpFolder"] = folder });
            using var client = app.CreateControlClient();
            using var held = new HttpClient { BaseAddress = app.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };
            var requests = Scenarios.SelectMany(s => Enumerable.Range(0, PerScenario).Select(_ => held.GetAsync(new Uri($"{s.Route}?delayMs={DelayMs}", UriKind.Relative)))).ToList();
            // Long enough for each request to reach its wait (the SQL family opens its connection first), well within its delay.
            await Task.Delay(TimeSpan.FromSeconds(3));

            var uri = new Uri("api/threadpool/stacks?dump=true", UriKind.Relative);
            var first = client.PostAsync(uri, null);
            var second = client.PostAsync(uri, null);
            using var answers = new Answers(await first.TimeoutAfter(TimeSpan.FromMinutes(1)), await second.TimeoutAfter(TimeSpan.FromMinutes(1)));

            output.WriteLine($"{(int)answers.First.StatusCode} and {(int)answers.Second.StatusCode}");
            var (written, refused) = answers.First.StatusCode == HttpStatusCode.OK ? (answers.First, answers.Second) : (answers.Second, answers.First);
            var body = await written.Content.ReadAsStringAsync().DefaultTimeout();
            Assert.True(written.StatusCode == HttpStatusCode.OK, body);
            var dumpFile = JsonDocument.Parse(body).RootElement.GetProperty("dumpFile").GetString();
            Assert.True(dumpFile is not null && dumpFile.StartsWith(folder, StringComparison.Ordinal) && File.Exists(dumpFile), body);
            var problem = await ProblemDetailsAssert.IsProblemAsync(refused, HttpStatusCode.Conflict);
            Assert.Equal("A dump is already being written.", problem.GetProperty("title").GetString());
            Assert.Single(Directory.GetFiles(folder));

            var read = await DiagnoseCli.RunAsync("stacks", dumpFile, "--json", "--top", "10");
            Assert.True(read.ExitCode == 0, read.ToString());
            var snapshot = JsonSerializer.Deserialize<StackSnapshot>(read.Output, Json)!;
            var sites = snapshot.BlockedPoolSites;
            output.WriteLine(string.Join('\n', snapshot.BlockedPoolSiteLines));
            foreach (var (route, action, awaited) in Scenarios)
            {
                var site = sites.FirstOrDefault(s => s.AppFrames is [var innermost, ..] && innermost.Method == action && innermost.Source is not null);
                Assert.True(site is not null, $"no site of the dump names {action} with its line ({route})");
                Assert.NotNull(site.Awaits);
                if (awaited is null)
                {
                    Assert.Empty(site.Awaits.Chain);
                }
                else
                {
                    Assert.Equal((awaited, "Task.Delay"), (site.Awaits.Chain is [var innermost, ..] ? innermost.Method : null, site.Awaits.Awaiting));
                    Assert.NotNull(site.Awaits.Chain[0].Await);
                }
            }

            // The held requests end here, cancelled, not answered.
            held.CancelPendingRequests();
            await Task.WhenAll(requests.Select(r => r.ContinueWith(_ => { }, TaskScheduler.Default))).TimeoutAfter(TimeSpan.FromSeconds(10));
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    private sealed record Answers(HttpResponseMessage First, HttpResponseMessage Second) : IDisposable
    {
        public void Dispose()
        {
            First.Dispose();
            Second.Dispose();
        }
    }
}
