using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// The requests a snapshot's threads are tied to, read from a wait trace that went on after the snapshot (as
/// <c>compare --diagnose</c> reads them): only those started before the moment given label threads and are counted.
/// </summary>
public sealed class RequestEventsTests : IDisposable
{
    private const string Before = "api/diagscenario/ping";
    private const string After = "api/scenarios";

    // Each side of the moment stays this far from a request: the trace's clock and this process's are the same machine's,
    // read through the session's sync point (milliseconds).
    private static readonly TimeSpan Apart = TimeSpan.FromMilliseconds(200);

    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("request-events-");

    [Fact]
    public async Task Read_UntilAMoment_LabelsThreadsWithAndCountsOnlyRequestsStartedBeforeIt()
    {
        await using var server = await LoadExperiment.StartServerAsync();
        var trace = Path.Combine(_folder.FullName, "waits.nettrace");
        using var client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = TimeSpan.FromSeconds(10) };
        var moment = DateTime.MinValue;

        await Task.Factory.StartNew(() => WaitAnalyzer.Record(server.ProcessId, () =>
        {
            Send(client, Before);
            Send(client, Before);
            Thread.Sleep(Apart);
            moment = DateTime.UtcNow;
            Thread.Sleep(Apart);
            Send(client, After);
        }, trace), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).DefaultTimeout();

        var untilTheMoment = RequestEvents.Read(trace, Apart, instant: moment);
        var all = RequestEvents.Read(trace, Apart + Apart);

        var labels = $"until the moment: {untilTheMoment.Source}: {string.Join(", ", untilTheMoment.ByThread.Values)}; all: {all.Source}: {string.Join(", ", all.ByThread.Values)}";
        Assert.True(untilTheMoment.ByThread.Values.Contains($"GET /{Before}") && !untilTheMoment.ByThread.Values.Contains($"GET /{After}"), labels);
        // Counted one by one, where a thread's label shows only the last it started.
        Assert.Equal(new Dictionary<string, int> { [$"GET /{Before}"] = 2 }, untilTheMoment.Started);
        // Without the moment, the later request labels its thread and is counted: the cut is what left it out.
        Assert.True(all.ByThread.Values.Contains($"GET /{After}"), labels);
        Assert.Equal(new Dictionary<string, int> { [$"GET /{Before}"] = 2, [$"GET /{After}"] = 1 }, all.Started);
    }

    [Fact]
    public void Tally_CountsAtMostMaxCountedDifferentRequests_TheRestTogether_AndLabelsThreadsWithWhatTheyStarted()
    {
        const int Max = RequestEvents.Tally.MaxCounted;
        var tally = new RequestEvents.Tally();
        for (var i = 0; i < Max + 5; i++)
        {
            tally.Add(1, $"GET /orders/{i}");
        }

        tally.Add(2, "GET /orders/0");
        var labels = tally.Labels("over 1 s", "none");

        Assert.Equal(Max + 1, labels.Started!.Count);
        Assert.Equal(2, labels.Started["GET /orders/0"]);
        Assert.Equal(5, labels.Started[RequestEvents.Tally.Others]);
        Assert.Equal(Max + 6, labels.Started.Values.Sum());
        Assert.Equal(Max + 6, tally.Count);
        Assert.Equal("GET /orders/0", tally.Last(2));
        Assert.Null(tally.Last(3));
        Assert.Equal($"GET /orders/{Max + 4}", labels.ByThread[1]);
        Assert.Equal("GET /orders/0", labels.ByThread[2]);
    }

    public void Dispose() => _folder.Delete(recursive: true);

    private static void Send(HttpClient client, string path)
    {
        using var response = client.Send(new HttpRequestMessage(HttpMethod.Get, path));
        response.EnsureSuccessStatusCode();
    }
}
