using System.Text;
using DiagnosticScenarios.Tests.Load;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

/// <summary>
/// The DiagnosticScenarios meter is readable from another process, beside the runtime's thread-pool counters.
/// dotnet-counters is not in this package source, so the check uses the tool manifest's dotnet-trace, which reads
/// the same System.Diagnostics.Metrics event source over EventPipe that dotnet-counters reads.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class MetricsFromOutsideTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(120);

    [Fact]
    public async Task DotnetTrace_ReadsOurMeterAndTheThreadPoolCounters_FromTheRunningApp()
    {
        await using var app = await HealthApp.StartAsync();
        using var client = app.CreateClient();
        var output = Path.Combine(Path.GetTempPath(), $"diagnosticscenarios-metrics-{Guid.NewGuid():N}.nettrace");
        try
        {
            await RunDotnetAsync(["tool", "restore"]).WaitAsync(Timeout);
            var collect = RunDotnetAsync(
            [
                "tool", "run", "dotnet-trace", "--", "collect", "-p", app.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture),
                "--providers", "System.Diagnostics.Metrics:0x2:4:Metrics=DiagnosticScenarios\\nSystem.Runtime;RefreshInterval=1",
                "--duration", "00:00:00:06", "-o", output,
            ]);
            var requests = Task.Run(async () =>
            {
                for (var i = 0; i < 20; i++)
                {
                    await client.GetStringAsync(new Uri("/api/diagscenario/taskwait?delayMs=50", UriKind.Relative));
                }
            });

            await collect.WaitAsync(Timeout);
            await requests.WaitAsync(Timeout);
            var bytes = await File.ReadAllBytesAsync(output).WaitAsync(Timeout);
            // EventPipe payload strings are UTF-16 at any byte offset: read the file at both alignments.
            var trace = Encoding.Unicode.GetString(bytes) + Encoding.Unicode.GetString(bytes, 1, bytes.Length - 1);

            // Published values, not just instrument declarations: name, unit, no tags, then the quantiles.
            Assert.Contains("DiagnosticScenarios\0\0diagnosticscenarios.threadpool.queue_delay\0ms\0\00.5=", trace, StringComparison.Ordinal);
            Assert.Contains("diagnosticscenarios.http.server.thread_hold_time\0ms\0http.route=/api/diagscenario/taskwait\00.5=", trace, StringComparison.Ordinal);
            Assert.Contains("System.Runtime\0\0dotnet.thread_pool.thread.count\0{thread}\0", trace, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(output);
        }
    }

    /// <summary>Runs dotnet with the repository's tool manifest (the tool is restored on first use, as a user would).</summary>
    private static async Task RunDotnetAsync(string[] arguments)
    {
        var result = await ChildProcess.RunAsync("dotnet", arguments, Timeout, workingDirectory: RepositoryPaths.Root);
        if (result.ExitCode != 0)
        {
            throw new InvalidOperationException(result.ToString());
        }
    }
}
