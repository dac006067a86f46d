using System.Diagnostics;
using System.Net;

namespace DiagnosticScenarios.LoadRunner.Load;

/// <summary>
/// Drives HTTP/1.1 keep-alive load at one URL. Everything here is asynchronous, so the generator holds no thread
/// while a request is in flight and cannot itself starve the way the servers it measures do.
/// </summary>
public static class LoadGenerator
{
    public static async Task<LoadReport> RunAsync(LoadOptions options, IProgress<LoadProgress>? progress = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();

        using var handler = CreateHandler(options);
        using var client = new HttpClient(handler, disposeHandler: false) { Timeout = Timeout.InfiniteTimeSpan };
        var run = new Run(options, client);

        using var progressStop = new CancellationTokenSource();
        var reporting = progress is null ? Task.CompletedTask : ReportProgressAsync(run, progress, options.ProgressInterval, progressStop.Token);
        try
        {
            await (options.Rate is null ? run.ClosedLoopAsync(cancellationToken) : run.OpenLoopAsync(cancellationToken));
        }
        finally
        {
            await progressStop.CancelAsync();
            await reporting;
        }

        return run.Recorder.ToReport(options, run.Sent, run.Elapsed);
    }

    /// <summary>One connection per client at most, kept alive for the whole run, no proxy, no decompression.</summary>
    internal static SocketsHttpHandler CreateHandler(LoadOptions options) => new()
    {
        MaxConnectionsPerServer = options.Connections,
        PooledConnectionLifetime = Timeout.InfiniteTimeSpan,
        PooledConnectionIdleTimeout = TimeSpan.FromMinutes(5),
        ConnectTimeout = options.Timeout,
        UseProxy = false,
        UseCookies = false,
        AllowAutoRedirect = false,
        AutomaticDecompression = DecompressionMethods.None,
    };

    private static async Task ReportProgressAsync(Run run, IProgress<LoadProgress> progress, TimeSpan interval, CancellationToken cancellationToken)
    {
        using var timer = new PeriodicTimer(interval);
        var lastCompleted = 0L;
        try
        {
            while (await timer.WaitForNextTickAsync(cancellationToken))
            {
                var completed = run.Recorder.Completed;
                progress.Report(new LoadProgress(run.Elapsed, run.Sent, completed, run.Recorder.Failures, run.InFlight, (completed - lastCompleted) / interval.TotalSeconds));
                lastCompleted = completed;
            }
        }
        catch (OperationCanceledException)
        {
            // The run is over; the final report follows.
        }
    }

    private sealed class Run(LoadOptions options, HttpClient client)
    {
        private readonly Stopwatch _clock = new();
        private readonly long _maxRequests = options.Requests ?? long.MaxValue;
        private readonly long _stopSendingAt = ToStopwatchTicks(options.EffectiveDuration);
        private long _reserved;
        private long _sent;
        private long _inFlight;

        public LatencyRecorder Recorder { get; } = new();
        public long Sent => Interlocked.Read(ref _sent);
        public long InFlight => Interlocked.Read(ref _inFlight);

        /// <summary>Runs while the load runs; frozen at the last answer (or at the cut, when the drain is bounded).</summary>
        public TimeSpan Elapsed => _clock.Elapsed;

        /// <summary>Every client sends its next request as soon as its previous one is answered, like bombardier and hey.</summary>
        public async Task ClosedLoopAsync(CancellationToken cancellationToken)
        {
            using var inFlight = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            _clock.Start();
            var clients = Enumerable.Range(0, options.Connections).Select(_ => ClientAsync(inFlight.Token)).ToArray();
            await FinishAsync(clients, inFlight, cancellationToken);

            async Task ClientAsync(CancellationToken requestToken)
            {
                await Task.Yield();
                // The cut-off cancels requestToken and stops the clock, which a coarse timer can do a little before the clock
                // reaches the end: the token, not the clock, tells a client the run is over.
                while (_clock.ElapsedTicks < _stopSendingAt && !requestToken.IsCancellationRequested && Interlocked.Increment(ref _reserved) <= _maxRequests)
                {
                    await SendAsync(_clock.ElapsedTicks, requestToken);
                    if (options.ThinkTime is { } think && think > TimeSpan.Zero)
                    {
#pragma warning disable CA5394 // a think time needs spread, not secrecy
                        await Task.Delay(think * Random.Shared.NextDouble(), CancellationToken.None);
#pragma warning restore CA5394
                    }
                }
            }
        }

        /// <summary>
        /// Requests leave at fixed intended times, whatever the server does, and latency counts from that intended time:
        /// a request the client could not even send because every connection was busy shows its full wait.
        /// </summary>
        public async Task OpenLoopAsync(CancellationToken cancellationToken)
        {
            using var inFlight = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            var interval = Stopwatch.Frequency / options.Rate!.Value;
            var requests = new List<Task>();
            _clock.Start();
            for (long next = 0; next < _maxRequests && !cancellationToken.IsCancellationRequested;)
            {
                var intended = (long)(next * interval);
                if (intended >= _stopSendingAt)
                {
                    break;
                }

                var now = _clock.ElapsedTicks;
                if (intended > now)
                {
                    // Sleep until the next send falls due; sends that fall due together go out together.
                    var wait = TimeSpan.FromSeconds((intended - now) / (double)Stopwatch.Frequency);
                    await Task.Delay(wait > TimeSpan.FromMilliseconds(1) ? wait : TimeSpan.FromMilliseconds(1), CancellationToken.None);
                    continue;
                }

                requests.Add(SendAsync(intended, inFlight.Token));
                next++;
            }

            await FinishAsync(requests, inFlight, cancellationToken);
        }

        private async Task FinishAsync(IReadOnlyCollection<Task> requests, CancellationTokenSource inFlight, CancellationToken cancellationToken)
        {
            var all = Task.WhenAll(requests);
            if (options.Drain is { } drain)
            {
                // Give the clients until the deadline and the drain after it; whatever is still in flight then is cut off and
                // counted as unfinished.
                var untilCut = TimeSpan.FromSeconds(Math.Max(0, _stopSendingAt - _clock.ElapsedTicks) / (double)Stopwatch.Frequency) + drain;
                await Task.WhenAny(all, Task.Delay(untilCut, CancellationToken.None));
                _clock.Stop();
                await inFlight.CancelAsync();
            }

            await all;
            _clock.Stop();
            cancellationToken.ThrowIfCancellationRequested();
        }

        private async Task SendAsync(long intendedTicks, CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref _sent);
            Interlocked.Increment(ref _inFlight);
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            timeout.CancelAfter(options.Timeout);
            try
            {
                using var request = new HttpRequestMessage(options.Method, options.Url)
                {
                    Version = HttpVersion.Version11,
                    VersionPolicy = HttpVersionPolicy.RequestVersionExact,
                    Content = options.BodyBytes is { } bytes ? new SlowUploadContent(bytes, options.UploadOver ?? TimeSpan.Zero) : null,
                };
                using var response = await client.SendAsync(request, HttpCompletionOption.ResponseContentRead, timeout.Token);
                var finished = _clock.ElapsedTicks;
                Recorder.RecordAnswer((int)response.StatusCode, finished - intendedTicks, finished);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                Recorder.RecordUnfinished(_clock.ElapsedTicks - intendedTicks);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested)
            {
                var finished = _clock.ElapsedTicks;
                Recorder.RecordTimeout(finished - intendedTicks, finished);
            }
            catch (HttpRequestException e)
            {
                Recorder.RecordError(e.HttpRequestError == HttpRequestError.Unknown ? e.Message : e.HttpRequestError.ToString(), _clock.ElapsedTicks);
            }
            finally
            {
                Interlocked.Decrement(ref _inFlight);
            }
        }

        private static long ToStopwatchTicks(TimeSpan duration) =>
            duration == TimeSpan.MaxValue ? long.MaxValue / 2 : (long)(duration.TotalSeconds * Stopwatch.Frequency);
    }
}
