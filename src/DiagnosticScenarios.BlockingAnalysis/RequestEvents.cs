using System.Diagnostics.Tracing;
using System.Globalization;
using System.Text.Json;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Which request and which endpoint each thread of an ASP.NET Core process runs, from outside it. The
/// <c>Microsoft.AspNetCore.Hosting</c> EventSource raises RequestStart (method and path) on the thread that starts a request;
/// ASP.NET Core's endpoint middleware logs "Executing endpoint" and "Executed endpoint" on the thread that runs it, read over
/// EventPipe through the <c>Microsoft-Extensions-Logging</c> EventSource whatever the app's own log levels. A sync endpoint
/// runs on one thread between the two: what ties a parked thread whose frames the JIT inlined away to its endpoint.
/// </summary>
public static class RequestEvents
{
    public const string HostingProvider = "Microsoft.AspNetCore.Hosting";
    public const string LoggingProvider = "Microsoft-Extensions-Logging";

    // RequestStart(string method, string path) in ASP.NET Core's HostingEventSource.
    private const int RequestStartId = 3;

    private const string EndpointLogger = "Microsoft.AspNetCore.Routing.EndpointMiddleware";

    // The logging EventSource's keyword for messages with their arguments as JSON.
    private const long JsonMessages = 0x8;

    /// <summary>The providers the events come from: the hosting events, and the endpoint middleware's log at Information.</summary>
    public static IReadOnlyList<EventPipeProvider> Providers { get; } =
    [
        new(HostingProvider, EventLevel.Informational),
        new(LoggingProvider, EventLevel.Informational, JsonMessages, new Dictionary<string, string> { ["FilterSpecs"] = $"{EndpointLogger}:Information" }),
    ];

    /// <summary>"GET /path" when <paramref name="data"/> is the hosting event that starts a request, else null.</summary>
    public static string? RequestStarted(TraceEvent data)
    {
        ArgumentNullException.ThrowIfNull(data);
        return (int)data.ID == RequestStartId && data.ProviderName == HostingProvider && data.PayloadByName("method") is string method && data.PayloadByName("path") is string path
            ? $"{method} {path}"
            : null;
    }

    /// <summary>The endpoint whose execution <paramref name="data"/> logs starting or ending on its thread, else null.</summary>
    public static (string Endpoint, bool Starts)? EndpointLogged(TraceEvent data)
    {
        ArgumentNullException.ThrowIfNull(data);
        if (data.ProviderName != LoggingProvider || data.PayloadByName("LoggerName") as string != EndpointLogger
            || data.PayloadByName("EventName") is not ("ExecutingEndpoint" or "ExecutedEndpoint") || data.PayloadByName("ArgumentsJson") is not string json)
        {
            return null;
        }

        try
        {
            using var arguments = JsonDocument.Parse(json);
            return arguments.RootElement.TryGetProperty("EndpointName", out var name) && name.GetString() is { } endpoint
                ? (endpoint, (string)data.PayloadByName("EventName")! == "ExecutingEndpoint")
                : null;
        }
        catch (JsonException)
        {
            return null;
        }
    }

    /// <summary>
    /// The requests and endpoints of a trace that holds these events (its own session's, or a wait trace's), as they ran at
    /// <paramref name="instant"/> (UTC) when given: the moment a snapshot recorded in another session sampled the threads,
    /// on the same machine's clock. Requests started after it are not counted.
    /// </summary>
    /// <param name="window">How long the events cover, as the labels' source says it.</param>
    /// <exception cref="DiagnosisException">The file cannot be read as a trace.</exception>
    public static RequestLabels Read(string nettracePath, TimeSpan window, DateTime? instant = null)
    {
        var tally = new Tally(endpointEventsKept: int.MaxValue);
        try
        {
            using var source = new EventPipeEventSource(nettracePath);
            source.Dynamic.All += data =>
            {
                if (instant is null || RequestStarted(data) is null || data.TimeStamp.ToUniversalTime() <= instant)
                {
                    tally.Add(data);
                }
            };
            source.Process();
        }
        catch (Exception e) when (e is not DiagnosisException and not OutOfMemoryException)
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableTrace, $"{nettracePath} is not a readable .nettrace ({e.GetType().Name}: {TargetProcess.FirstLine(e.Message)}).", e);
        }

        var seconds = window.TotalSeconds.ToString("0.#", CultureInfo.InvariantCulture);
        var none = tally.IsEmpty
            ? $"no request started on these threads in the {seconds} s window (the process raised no ASP.NET Core hosting event: not an ASP.NET Core app, no request arrived, or the pool was too starved to start one: a request starts on a pool thread)"
            : $"no request started on these threads in the {seconds} s window";
        return tally.Labels($"over {seconds} s", none, instant);
    }

    /// <summary>
    /// The requests started so far: the last on each thread, and how many of each, up to <see cref="MaxCounted"/> different
    /// ones (a path with an id in it is a new one each time, and <c>watch</c> may listen to a busy service for hours); the
    /// rest are counted together under <see cref="Others"/>. And each thread's last endpoint starts and ends, to tell which
    /// endpoint it ran at a given moment.
    /// </summary>
    /// <remarks>Not thread-safe: one reader feeds it, and readers of its labels lock around both.</remarks>
    internal sealed class Tally
    {
        public const int MaxCounted = 1000;

        // A thread's endpoint log kept this deep: enough to bracket a moment a snapshot chose.
        private const int EndpointEventsKept = 8;

        public static readonly string Others = $"other requests (more than {MaxCounted} different ones)";

        private readonly Dictionary<int, string> _last = [];
        private readonly Dictionary<string, int> _started = new(StringComparer.Ordinal);
        private readonly Dictionary<int, Queue<(DateTime At, string Endpoint, bool Starts)>> _endpoints = [];
        private readonly int _endpointEventsKept;

        /// <param name="endpointEventsKept">How many of each thread's last endpoint events are kept: a few for a live
        /// listener that asks of the last moments, all for a trace read whole whose waits ask of any moment.</param>
        public Tally(int endpointEventsKept = EndpointEventsKept) => _endpointEventsKept = endpointEventsKept;

        public bool IsEmpty => _started.Count == 0;

        /// <summary>How many requests started, all of them, the ones counted under <see cref="Others"/> too.</summary>
        public int Count => _started.Values.Sum();

        /// <summary>The last request started on <paramref name="threadId"/>, or null when none has.</summary>
        public string? Last(int threadId) => _last.GetValueOrDefault(threadId);

        /// <summary>Counts <paramref name="data"/> when it is a request's start or an endpoint's log; ignores anything else.</summary>
        public void Add(TraceEvent data)
        {
            if (RequestStarted(data) is { } request)
            {
                Add(data.ThreadID, request);
            }
            else if (EndpointLogged(data) is var (endpoint, starts))
            {
                AddEndpoint(data.ThreadID, data.TimeStamp.ToUniversalTime(), endpoint, starts);
            }
        }

        public void Add(int threadId, string request)
        {
            _last[threadId] = request;
            var counted = _started.Count < MaxCounted || _started.ContainsKey(request) ? request : Others;
            _started[counted] = _started.GetValueOrDefault(counted) + 1;
        }

        public void AddEndpoint(int threadId, DateTime at, string endpoint, bool starts)
        {
            if (!_endpoints.TryGetValue(threadId, out var log))
            {
                log = new Queue<(DateTime, string, bool)>(Math.Min(_endpointEventsKept, EndpointEventsKept));
                _endpoints[threadId] = log;
            }

            if (log.Count == _endpointEventsKept)
            {
                log.Dequeue();
            }

            log.Enqueue((at, endpoint, starts));
        }

        /// <summary>
        /// The endpoint <paramref name="threadId"/> was running at <paramref name="instant"/>: the last it started before then
        /// and had not finished, or the first it finished after then without starting another; null when its log says neither.
        /// </summary>
        public string? EndpointAt(int threadId, DateTime instant)
        {
            if (!_endpoints.TryGetValue(threadId, out var log))
            {
                return null;
            }

            var before = log.LastOrDefault(e => e.At <= instant);
            if (before.Endpoint is not null && before.Starts)
            {
                return before.Endpoint;
            }

            var after = log.FirstOrDefault(e => e.At > instant);
            return after.Endpoint is not null && !after.Starts ? after.Endpoint : null;
        }

        /// <param name="when">When they started, for the labels' source, e.g. "over 1.5 s" or "while watching".</param>
        /// <param name="none">What to say of threads that started none.</param>
        /// <param name="instant">The moment whose endpoints label the threads; null for none.</param>
        public RequestLabels Labels(string when, string none, DateTime? instant = null) => new(
            $"ASP.NET Core's hosting events {when} ({Count} requests started)",
            "last request started on these threads:",
            none,
            new Dictionary<int, string>(_last),
            Exact: false)
        {
            Started = new Dictionary<string, int>(_started, StringComparer.Ordinal),
            Endpoints = instant is not { } at ? new Dictionary<int, EndpointLabel>() : _endpoints.Keys
                .Select(thread => (thread, Endpoint: EndpointAt(thread, at)))
                .Where(t => t.Endpoint is not null)
                .ToDictionary(t => t.thread, t => new EndpointLabel(t.Endpoint!)),
        };
    }
}

/// <summary>The endpoint a thread runs, as ASP.NET Core names it, and its method where the app itself says which.</summary>
/// <param name="Name">The endpoint's display name, e.g. <c>Contoso.Orders.Controllers.OrdersController.Get (Contoso.Orders)</c> or <c>HTTP: GET /stock/{sku}</c>.</param>
/// <param name="Method">The method it runs, from the app's own endpoint metadata; null when only the name is known.</param>
public sealed record EndpointLabel(string Name, EndpointMethod? Method = null)
{
    /// <summary>Where the label was read when not from the app's own labels, e.g. "whose action a dump shows on the stacks of"; null: the app's.</summary>
    public string? SeenAs { get; init; }
}
