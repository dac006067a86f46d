using System.Diagnostics.Tracing;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Tests.DotnetBlocking;
using Microsoft.Diagnostics.NETCore.Client;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// A session whose buffer fills before it is read loses events, which TraceEvent counts from the gaps in their sequence
/// numbers. A snapshot from such a session says how many, in its JSON and in the CLI's text, rather than pass for complete
/// (a snapshot that reads one managed thread of an app that has a dozen would say "no pool thread is parked"); the
/// capture's own session, read as it is written, loses none.
/// </summary>
public sealed class LostEventsTests : IDisposable
{
    private const string SampleProfiler = "Microsoft-DotNETCore-SampleProfiler";
    private readonly string _folder = Directory.CreateTempSubdirectory("lost-events-").FullName;

    [Fact]
    public async Task Snapshot_OfASessionThatLostEvents_SaysHowMany_AndTheCapturesOwnSessionLosesNone()
    {
        await using var app = await OutOfProcessApp.StartAsync();
        var lossy = Path.Combine(_folder, "lossy.nettrace");
        await Task.Factory.StartNew(() => RecordUnreadAtFirst(app.ProcessId, lossy), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).DefaultTimeout();

        var lost = await Task.Run(() => StackSnapshots.Analyze(lossy)).DefaultTimeout();
        var captured = await Task.Run(() => StackSnapshots.Capture(app.ProcessId)).DefaultTimeout();
        var cli = await DiagnoseCli.RunAsync("waits", lossy);

        Assert.True(lost.EventsLost > 0 && lost.ThreadCount > 0, $"{lost.EventsLost} events lost, {lost.ThreadCount} threads read from the session left unread");
        Assert.True(captured.EventsLost == 0 && captured.Incomplete is null, $"the capture lost {captured.EventsLost} events: {captured.Incomplete}");
        Assert.True(cli.ExitCode == 0, cli.ToString());
        Assert.Contains($"The runtime dropped {lost.EventsLost} events of this session", cli.Output, StringComparison.Ordinal);
    }

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    // A 1 MB buffer left unread for two seconds (a fixed interval: the buffer must fill before anything reads it), while the
    // sample profiler samples every thread every millisecond: the idle app's threads fill it within a second, and the second
    // second leaves room for a busy machine's slower sampling. Then read to its end while the session stops, as every
    // recording here does.
    private static void RecordUnreadAtFirst(int processId, string path)
    {
        var client = new DiagnosticsClient(processId);
        using var session = client.StartEventPipeSession([new EventPipeProvider(SampleProfiler, EventLevel.Informational)], requestRundown: true, circularBufferMB: 1);
        Thread.Sleep(TimeSpan.FromSeconds(2));
        using var file = File.Create(path);
        var copy = new Thread(() => session.EventStream.CopyTo(file)) { IsBackground = true };
        copy.Start();
        session.Stop();
        Assert.True(copy.Join(TimeSpan.FromSeconds(20)), "the session's stream was not read to its end within 20 s of the stop");
    }
}
