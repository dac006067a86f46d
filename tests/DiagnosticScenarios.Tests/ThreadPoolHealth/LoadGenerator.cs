using System.Diagnostics;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

/// <summary>A closed-loop load from the test process onto an app in another process, bounded in requests and time.</summary>
internal static class LoadGenerator
{
    public static async Task<int> RunAsync(Uri url, int connections, TimeSpan duration, int maxRequests)
    {
        using var client = new HttpClient { Timeout = duration + TimeSpan.FromSeconds(30) };
        var sent = 0;
        var completed = 0;
        var clock = Stopwatch.StartNew();

        async Task Worker()
        {
            while (clock.Elapsed < duration && Interlocked.Increment(ref sent) <= maxRequests)
            {
                try
                {
                    using var response = await client.GetAsync(url);
                    if (response.IsSuccessStatusCode)
                    {
                        Interlocked.Increment(ref completed);
                    }
                }
                catch (HttpRequestException)
                {
                    // A refused or reset connection counts as not completed; the assertions look at the server's figures.
                }
                catch (TaskCanceledException)
                {
                    // Timed out under starvation: the same.
                }
            }
        }

        await Task.WhenAll(Enumerable.Range(0, connections).Select(_ => Task.Run(Worker))).WaitAsync(duration + TimeSpan.FromSeconds(60));
        return completed;
    }
}
