using System.Globalization;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.OffPool;

/// <summary>
/// The live page's port at its default limits, during a starvation (taskwait, 125 connections, from the app's runner),
/// still answer, each within a second, every time: the listener sheds and reserves what a starvation needs.
/// still answer, each within a second, every time. Before the listener shed and reserved, neither answered once in ten.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class PagePortUnderStarvationTests(ITestOutputHelper output)
{
    private const int Streams = 64;
    private const int Silent = 200;
    private const int Reads = 10;
    private static readonly TimeSpan Answer = TimeSpan.FromSeconds(1);

    [Fact]
    public async Task ScrapeAndSnapshot_AnswerWithinASecond10TimesOf10_With64StreamsAnd200SilentConnectionsOpen_WhileTaskWaitStarvesThePool()
    {
        var pagePort = FreeLoopbackPort.Pick();
        await using var app = await HealthApp.StartAsync(new Dictionary<string, string> { ["LivePage__Port"] = pagePort.ToString(CultureInfo.InvariantCulture) });
        using var client = app.CreateControlClient();
        using var load = await client.PostAsync(new Uri($"api/threadpool/load?scenario=diagscenario/taskwait&connections={ScenarioLimits.DefaultConnections}&durationSeconds=30", UriKind.Relative), null).DefaultTimeout();
        Assert.True(load.IsSuccessStatusCode, await load.Content.ReadAsStringAsync());
        var (starved, _) = await Poll.UntilAsync(() => SnapshotAsync(pagePort), s => s.Starved, TimeSpan.FromSeconds(20), TimeSpan.FromMilliseconds(250));
        Assert.True(starved, "the detector never declared starvation under taskwait: this test would prove nothing");

        var sockets = new List<Socket>();
        var reads = new List<Task>();
        try
        {
            // One client: 64 streams, read as a browser reads them, then 200 connections that send nothing.
            for (var i = 0; i < Streams; i++)
            {
                var socket = await RawHttp.ConnectAsync(pagePort);
                sockets.Add(socket);
                await socket.SendAsync(Encoding.ASCII.GetBytes("GET /api/threadpool/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")).DefaultTimeout();
                reads.Add(RawHttp.ReadUntilClosedAsync(socket));
            }

            for (var i = 0; i < Silent; i++)
            {
                sockets.Add(await RawHttp.ConnectAsync(pagePort));
            }

            var answers = new List<(string Path, int Status, TimeSpan Took, bool? Starved)>();
            for (var i = 0; i < Reads; i++)
            {
                foreach (var path in new[] { "/metrics", "/api/threadpool" })
                {
                    var (answer, took) = await RawHttp.ExchangeAsync(pagePort, $"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
                    answers.Add((path, RawHttp.Status(answer), took, path == "/api/threadpool" && RawHttp.Status(answer) == 200 ? StarvedIn(answer) : null));
                }

                await Task.Delay(TimeSpan.FromMilliseconds(500));
            }

            output.WriteLine($"{reads.Count(r => r.IsCompleted)} of {Streams} streams ended by the server (shed for newer ones), {Streams - reads.Count(r => r.IsCompleted)} still streaming");
            output.WriteLine(string.Join("\n", answers.Select(a => string.Create(CultureInfo.InvariantCulture, $"{a.Path}: {a.Status} in {a.Took.TotalMilliseconds:0} ms{(a.Starved is { } s ? $", starved {s}" : "")}"))));
            Assert.All(answers, a => Assert.True(a.Status == 200 && a.Took <= Answer, string.Create(CultureInfo.InvariantCulture, $"{a.Path} answered {a.Status} in {a.Took.TotalMilliseconds:0} ms")));
            // During a starvation: the snapshots served said so.
            Assert.True(answers.Count(a => a.Starved == true) >= Reads / 2, $"only {answers.Count(a => a.Starved == true)} of {Reads} snapshots were of a starved pool");
        }
        finally
        {
            sockets.ForEach(s => s.Dispose());
            await Task.WhenAll(reads).TimeoutAfter(TimeSpan.FromSeconds(10));
        }
    }

    private static async Task<(bool Starved, string Body)> SnapshotAsync(int port)
    {
        var (answer, _) = await RawHttp.ExchangeAsync(port, "GET /api/threadpool HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        return (RawHttp.Status(answer) == 200 && StarvedIn(answer), answer);
    }

    private static bool StarvedIn(string answer)
    {
        using var snapshot = JsonDocument.Parse(answer[(answer.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4)..]);
        return snapshot.RootElement.GetProperty("starvation").GetProperty("starved").GetBoolean();
    }
}
