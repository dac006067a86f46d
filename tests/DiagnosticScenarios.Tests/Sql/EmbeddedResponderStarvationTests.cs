using System.Diagnostics;
using System.Net;
using DiagnosticScenarios.Sql.Tds;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Sql;

/// <summary>Starves this test process's thread pool on purpose, so it runs alone, after the parallel tests.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ThreadPoolStarvationTestGroup
{
    public const string Name = "ThreadPoolStarvation";
}

/// <summary>
/// The embedded responder must not share the pool the scenarios starve: if it did, every WAITFOR would end late
/// exactly when the demo runs, and the measurements would show the responder, not the app.
/// </summary>
[Collection(ThreadPoolStarvationTestGroup.Name)]
public sealed class EmbeddedResponderStarvationTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    // Enough blocking requests to starve a pool that grows two threads a second, few enough not to spend the suite's time:
    // at 100 the test took 4 to 25 s in the suite; at 40, alone, 7 to 9 s with the starved queue delay still 5.5 to 7.5 s.
    private const int Requests = 40;
    private const int DelayMs = 500;

    // Forty requests on a pool that grows two threads a second, with room for a busy machine.
    private static readonly TimeSpan Patience = TimeSpan.FromMinutes(2);

    // The warm-up's logins block pool threads for a moment (SqlClient's OpenAsync, dotnet/SqlClient#979), and the tests
    // before this one leave the test host's pool as large as they made it; an idle pool thread retires after 20 s. The
    // forty requests starve a pool of a dozen threads for seconds (queue delay about 2 s after 13 to 15 threads in the fast
    // tests), but a pool that forty threads still served left the queue 467 ms behind, and that run proved nothing: the
    // load starts once the pool is at most this large (two and a half waves of the requests), within ColdPoolPatience.
    private const int ColdPoolThreads = 16;
    private static readonly TimeSpan ColdPoolPatience = TimeSpan.FromSeconds(45);

    // Pool threads start at the processor count and grow ~2 a second under starvation: 40 blocking requests of
    // 500 ms take several seconds in a starved pool; a pool queue delay of this much proves it was starved.
    // Measured with 100 requests: 9512, 3527 and 3984 ms in 3 runs; with 40, 7484, 5484 and 5483 ms (the class alone).
    private static readonly TimeSpan StarvedQueueDelay = TimeSpan.FromMilliseconds(500);

    // The responder's threads wake from poll(2) at the deadline; on a busy 2-core machine that is a few ms late,
    // an order of magnitude under what the starved pool shows. Measured: 1.8, 30.9 and 4.3 ms in 3 runs on a shared
    // 2-core machine (load average about 4); 0.7, 1.9 and 3.0 ms with 40 requests.
    private static readonly TimeSpan OnTime = TimeSpan.FromMilliseconds(100);

    [Fact]
    public async Task Responder_EndsEachWaitforOnTime_WhileTheSyncScenarioStarvesTheAppPool()
    {
        using var client = app.LogTo(output).CreateClient();
        client.Timeout = Patience;
        var responder = app.Services.GetRequiredService<TdsResponder>();
        // Warm the connection pool with overlapping async requests first: a cold pool would make the sync opens
        // fail instead (SqlClient's managed SNI needs pool threads for its pre-login handshake, dotnet/SqlClient#3118),
        // and this test is about the responder's WAITFOR timing, not about logins.
        var warmUp = await Task.WhenAll(Enumerable.Range(0, Requests)
            .Select(_ => client.GetAsync(new Uri("/api/sqlscenario/async?delayMs=1000", UriKind.Relative))))
            .TimeoutAfter(Patience);
        Assert.All(warmUp, r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        var warmTimings = responder.WaitforTimings().Count;
        Assert.True(
            await Poll.UntilAsync(() => ThreadPool.ThreadCount <= ColdPoolThreads, ColdPoolPatience),
            $"The pool still had {ThreadPool.ThreadCount} threads {ColdPoolPatience.TotalSeconds:0} s after the warm-up: this many would not starve under {Requests} requests.");
        var threadsBefore = ThreadPool.ThreadCount;
        using var probe = new PoolQueueDelayProbe();

        var requests = Enumerable.Range(0, Requests)
            .Select(_ => client.GetAsync(new Uri($"/api/sqlscenario/sync?delayMs={DelayMs}", UriKind.Relative)))
            .ToArray();
        var responses = await Task.WhenAll(requests).TimeoutAfter(Patience);
        var maxQueueDelay = probe.StopAndGetMax();

        Assert.All(responses, r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        var timings = responder.WaitforTimings().Skip(warmTimings).ToList();
        var maxLateness = timings.Max(t => t.Lateness);
        output.WriteLine($"pool threads before the load {threadsBefore}; pool queue delay max {maxQueueDelay.TotalMilliseconds:0} ms; responder lateness max {maxLateness.TotalMilliseconds:0.0} ms over {timings.Count} WAITFORs");
        Assert.True(maxQueueDelay >= StarvedQueueDelay, $"The pool was not starved (queue delay max {maxQueueDelay.TotalMilliseconds:0} ms), so this run proves nothing.");
        Assert.Equal(Requests, timings.Count);
        Assert.True(maxLateness <= OnTime, $"A WAITFOR ended {maxLateness.TotalMilliseconds:0} ms late while the pool was starved.");
        foreach (var response in warmUp.Concat(responses))
        {
            response.Dispose();
        }
    }

    /// <summary>Measures how long a work item waits in the pool's queue, from a thread of its own (one on the pool would report late exactly when it is starved).</summary>
    private sealed class PoolQueueDelayProbe : IDisposable
    {
        private readonly Thread _thread;
        private readonly ManualResetEventSlim _stop = new();
        private long _maxTicks;

        public PoolQueueDelayProbe()
        {
            _thread = new Thread(Run) { IsBackground = true, Name = "pool-queue-delay-probe" };
            _thread.Start();
        }

        public TimeSpan StopAndGetMax()
        {
            _stop.Set();
            _thread.Join(TimeSpan.FromSeconds(35));
            return TimeSpan.FromTicks(Interlocked.Read(ref _maxTicks));
        }

        public void Dispose()
        {
            StopAndGetMax();
            _stop.Dispose();
        }

        private void Run()
        {
            while (!_stop.IsSet)
            {
                using var ran = new ManualResetEventSlim();
                var queued = Stopwatch.GetTimestamp();
                ThreadPool.UnsafeQueueUserWorkItem(state => state.Set(), ran, preferLocal: false);
                ran.Wait(TimeSpan.FromSeconds(30));
                var delay = Stopwatch.GetElapsedTime(queued).Ticks;
                if (delay > Interlocked.Read(ref _maxTicks))
                {
                    Interlocked.Exchange(ref _maxTicks, delay);
                }

                _stop.Wait(TimeSpan.FromMilliseconds(50));
            }
        }
    }
}
