using System.Diagnostics;
using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.PoolHealth.StackCapture;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// The app's stack captures: every capture <c>GET /api/threadpool/stacks</c> served during the run, read once a second from
/// the live page's server (which answers while the pool is starved), as the page's stack panel reads it; and, when the
/// plan asks, one taken on request (<c>POST</c>, on the app itself) once the load is over and the pool healthy again.
/// </summary>
internal sealed class StacksObserver : IRunObserver
{
    private static readonly Uri Stacks = new("api/threadpool/stacks", UriKind.Relative);
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    /// <summary>How long after its load a starved server may take to be healthy again (taskwait's drains within seconds).</summary>
    private static readonly TimeSpan HealthyPatience = TimeSpan.FromSeconds(30);

    public string Name => "stack captures (GET and POST /api/threadpool/stacks)";

    public Task<IObservation> AttachAsync(RunContext run)
    {
        // Reading a capture is a control as much as taking one: every request carries the header.
        var client = new HttpClient { Timeout = TimeSpan.FromSeconds(15) };
        client.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");
        return Task.FromResult<IObservation>(new Observation(client, run));
    }

    private sealed class Observation : IObservation
    {
        private readonly HttpClient _client;
        private readonly RunContext _run;
        private readonly List<StackCaptureResult> _served = [];
        private readonly Task _polling;
        private readonly Task<PostedCapture?>? _postedWhileStarved;
        private (HttpStatusCode Status, string Body) _last;

        public Observation(HttpClient client, RunContext run)
        {
            (_client, _run) = (client, run);
            _polling = PollAsync(run.Stopping);
            _postedWhileStarved = run.Plan.CapturesStacksAfterTheLoad ? PostWhenStarvedAsync(run.Stopping) : null;
        }

        public async Task<object> StopAsync()
        {
#pragma warning disable VSTHRD003 // deliberate: this observation's own background work; tests have no SynchronizationContext to deadlock on
            await _polling.DefaultTimeout();
            var whileStarved = _postedWhileStarved is null ? null : await _postedWhileStarved.TimeoutAfter(TimeSpan.FromSeconds(40));
#pragma warning restore VSTHRD003
            await ReadAsync().DefaultTimeout();
            var posted = _run.Plan.CapturesStacksAfterTheLoad ? await PostWhenHealthyAsync().TimeoutAfter(TimeSpan.FromSeconds(40)) : null;
            _client.Dispose();
            return new StacksRecord(_last.Status, _last.Body, [.. _served], posted) { PostedToThePageWhileStarved = whileStarved };
        }

        // The page's Capture now, pressed once the detector has declared starvation: sent to the live page's own server, as
        // the page sends it. Null when the load ended before the detector said starved.
        private async Task<PostedCapture?> PostWhenStarvedAsync(CancellationToken stopping)
        {
            while (!stopping.IsCancellationRequested)
            {
                var snapshot = await _client.GetFromJsonAsync<JsonElement>(new Uri(_run.LivePage, "api/threadpool"), CancellationToken.None);
                if (snapshot.GetProperty("starvation").GetProperty("starved").GetBoolean())
                {
                    return await PostAsync(new Uri(_run.LivePage, Stacks));
                }

                await Task.Delay(TimeSpan.FromMilliseconds(250), stopping).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            }

            return null;
        }

        private async Task<PostedCapture> PostAsync(Uri stacks)
        {
            var sentAt = DateTimeOffset.UtcNow;
            var clock = Stopwatch.StartNew();
            using var response = await _client.PostAsync(stacks, content: null);
            var capture = response.StatusCode == HttpStatusCode.OK ? await response.Content.ReadFromJsonAsync<StackCaptureResult>() : null;
            return new PostedCapture(sentAt, response.StatusCode, capture, await response.Content.ReadAsStringAsync(), clock.Elapsed);
        }

        // Once two of the detector's seconds in a row are healthy, no capture of its own can still be under way (one takes
        // about half a second): the capture the POST answers is then taken for it.
        private async Task<PostedCapture> PostWhenHealthyAsync()
        {
            var healthy = 0L;
            var (twoHealthySeconds, last) = await Poll.UntilAsync(
                () => _client.GetFromJsonAsync<JsonElement>(new Uri(_run.LivePage, "api/threadpool")),
                snapshot =>
                {
                    var verdict = snapshot.GetProperty("starvation");
                    var sequence = verdict.GetProperty("sequence").GetInt64();
                    healthy = verdict.GetProperty("starved").GetBoolean() ? 0 : healthy == 0 ? sequence : healthy;
                    return healthy != 0 && sequence > healthy;
                },
                HealthyPatience, interval: TimeSpan.FromMilliseconds(250));
            if (!twoHealthySeconds)
            {
                throw new TimeoutException($"The pool was not healthy two seconds in a row within {HealthyPatience.TotalSeconds:0} s of the load's end: {last}");
            }

            return await PostAsync(new Uri(_run.App, Stacks));
        }

        private async Task PollAsync(CancellationToken stopping)
        {
            while (!stopping.IsCancellationRequested)
            {
                await ReadAsync();
                await Task.Delay(Interval, stopping).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            }
        }

        private async Task ReadAsync()
        {
            using var response = await _client.GetAsync(new Uri(_run.LivePage, Stacks));
            _last = (response.StatusCode, await response.Content.ReadAsStringAsync());
            if (response.StatusCode == HttpStatusCode.OK && await response.Content.ReadFromJsonAsync<StackCaptureResult>() is { } capture
                && !_served.Any(c => c.Trigger == capture.Trigger && c.RequestedAt == capture.RequestedAt))
            {
                _served.Add(capture);
            }
        }
    }
}

/// <summary>
/// What <c>GET /api/threadpool/stacks</c> answered last, once the load was over; every capture it served during the run,
/// oldest first; and the capture posted to the app after the load, if any.
/// </summary>
internal sealed record StacksRecord(HttpStatusCode LastStatus, string LastBody, IReadOnlyList<StackCaptureResult> Served, PostedCapture? Posted)
{
    /// <summary>The capture posted to the live page's own server once the detector declared starvation, if it did.</summary>
    public PostedCapture? PostedToThePageWhileStarved { get; init; }
}

/// <summary>When <c>POST /api/threadpool/stacks</c> was sent, what it answered, and how long it took.</summary>
internal sealed record PostedCapture(DateTimeOffset SentAt, HttpStatusCode Status, StackCaptureResult? Capture, string Body, TimeSpan AnsweredIn);
