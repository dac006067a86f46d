using System.Net;
using System.Text.Json;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.StackCapture;

/// <summary>
/// <c>POST /api/threadpool/stacks?dump=true</c>: the app writes a heap dump of itself before the capture and names it; a
/// second asked for while the first is written is refused with a ProblemDetails, not written beside it.
/// </summary>
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class AppDumpTests(ITestOutputHelper output)
{
    [Fact]
    public async Task CaptureWithDump_WritesOneDumpAndNamesIt_AndASecondAskedForMeanwhile_IsA409()
    {
        var folder = Directory.CreateTempSubdirectory("app-dumps-").FullName;
        try
        {
            await using var app = await HealthApp.StartAsync(new Dictionary<string, string> { ["StackCapture__DumpFolder"] = folder });
            using var client = app.CreateControlClient();
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
