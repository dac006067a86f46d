using System.Diagnostics;
using System.Net;
using System.Net.Http.Json;
using DiagnosticScenarios.Controls;
using DiagnosticScenarios.StackCapture;

namespace DiagnosticScenarios.Tests.Observed;

/// <summary>
/// The app's stack captures: every capture <c>GET /api/threadpool/stacks</c> served during the run, read once a second from
/// the live page's server (which answers while the pool is starved), as the page's stack panel reads it; and, when the
/// plan asks, one taken on request (<c>POST</c>, on the app itself) while the load is on.
/// </summary>
internal sealed class StacksObserver : IRunObserver
{
    private static readonly Uri Stacks = new("api/threadpool/stacks", UriKind.Relative);
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    public string Name => "stack captures (GET and POST /api/threadpool/stacks)";

    public Task<IObservation> AttachAsync(RunContext run)
    {
        // Reading a capture is a control as much as taking one: every request carries the header.
        var client = new HttpClient { Timeout = TimeSpan.FromSeconds(15) };
        client.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");
        var posting = run.Plan.CaptureStacksAfter is { } after ? PostAsync(client, run, after) : Task.FromResult<PostedCapture?>(null);
        return Task.FromResult<IObservation>(new Observation(client, run, posting));
    }

    private static async Task<PostedCapture?> PostAsync(HttpClient client, RunContext run, TimeSpan after)
    {
        var started = await run.WaitForLoadStartAsync();
        // Physics sets this interval: the load must have parked the pool's threads in the scenario's wait by then.
        var wait = started + after - DateTimeOffset.UtcNow;
        await Task.Delay(wait > TimeSpan.Zero ? wait : TimeSpan.Zero);
        var sentAt = DateTimeOffset.UtcNow;
        var clock = Stopwatch.StartNew();
        try
        {
            using var response = await client.PostAsync(new Uri(run.App, Stacks), content: null);
            var capture = response.StatusCode == HttpStatusCode.OK ? await response.Content.ReadFromJsonAsync<StackCaptureResult>() : null;
            return new PostedCapture(sentAt, response.StatusCode, capture, await response.Content.ReadAsStringAsync(), clock.Elapsed);
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
        {
            // A pool still starved answers late or not at all: the test reading it says so.
            return new PostedCapture(sentAt, null, null, e.Message, clock.Elapsed);
        }
    }

    private sealed class Observation : IObservation
    {
        private readonly HttpClient _client;
        private readonly Uri _livePage;
        private readonly Task<PostedCapture?> _posting;
        private readonly List<StackCaptureResult> _served = [];
        private readonly Task _polling;
        private (HttpStatusCode Status, string Body) _last;

        public Observation(HttpClient client, RunContext run, Task<PostedCapture?> posting)
        {
            (_client, _livePage, _posting) = (client, run.LivePage, posting);
            _polling = PollAsync(run.Stopping);
        }

        public async Task<object> StopAsync()
        {
#pragma warning disable VSTHRD003 // deliberate: this observation's own background work; tests have no SynchronizationContext to deadlock on
            await _polling.DefaultTimeout();
            var posted = await _posting.DefaultTimeout();
#pragma warning restore VSTHRD003
            await ReadAsync().DefaultTimeout();
            _client.Dispose();
            return new StacksRecord(_last.Status, _last.Body, [.. _served], posted);
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
            using var response = await _client.GetAsync(new Uri(_livePage, Stacks));
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
/// oldest first; and the capture posted during the load, if any.
/// </summary>
internal sealed record StacksRecord(HttpStatusCode LastStatus, string LastBody, IReadOnlyList<StackCaptureResult> Served, PostedCapture? Posted);

/// <summary>When <c>POST /api/threadpool/stacks</c> was sent during the load, what it answered (no status: no answer), and how long it took.</summary>
internal sealed record PostedCapture(DateTimeOffset SentAt, HttpStatusCode? Status, StackCaptureResult? Capture, string Body, TimeSpan AnsweredIn);
