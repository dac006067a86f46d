using System.Diagnostics.Tracing;
using System.Globalization;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Which request each thread of an ASP.NET Core process last started, from outside it: the <c>Microsoft.AspNetCore.Hosting</c>
/// EventSource raises RequestStart (method and path) on the thread that starts the request, and a sync action runs on
/// that thread until it returns. What ties a parked thread whose frames the JIT inlined away to its route.
/// </summary>
public static class HostingRequests
{
    public const string ProviderName = "Microsoft.AspNetCore.Hosting";

    // RequestStart(string method, string path) in ASP.NET Core's HostingEventSource.
    private const int RequestStartId = 3;

    /// <summary>
    /// Records the hosting events of <paramref name="processId"/> for <paramref name="window"/>, then runs
    /// <paramref name="atTheEnd"/> (a snapshot) while still recording, and answers the last request started on each thread.
    /// </summary>
    /// <exception cref="DiagnosisException">The process is not there, not .NET, or its diagnostic port did not answer.</exception>
    public static RequestLabels Record(int processId, TimeSpan window, Action atTheEnd, DiagnosisOptions? options = null)
    {
        options ??= DiagnosisOptions.Default;
        var trace = ScratchFiles.NewPath($"requests-{processId}", ".nettrace");
        try
        {
            var provider = new EventPipeProvider(ProviderName, EventLevel.Informational);
            EventPipeRecorder.Record(processId, [provider], ended =>
            {
                if (!ended.WaitOne(window))
                {
                    atTheEnd();
                }
            }, trace, options, rundown: false);
            return Read(trace, window);
        }
        finally
        {
            File.Delete(trace);
        }
    }

    /// <summary>"GET /path" when <paramref name="data"/> is the hosting event that starts a request, else null.</summary>
    public static string? RequestStarted(TraceEvent data)
    {
        ArgumentNullException.ThrowIfNull(data);
        return (int)data.ID == RequestStartId && data.ProviderName == ProviderName && data.PayloadByName("method") is string method && data.PayloadByName("path") is string path
            ? $"{method} {path}"
            : null;
    }

    /// <summary>
    /// The last request started on each thread in a trace that holds the hosting events (its own session's, or a wait
    /// trace's), up to <paramref name="until"/> (UTC) when given: the moment a snapshot recorded in another session sampled
    /// the threads, on the same machine's clock.
    /// </summary>
    /// <param name="window">How long the events cover, as the labels' source says it.</param>
    /// <exception cref="DiagnosisException">The file cannot be read as a trace.</exception>
    public static RequestLabels Read(string nettracePath, TimeSpan window, DateTime? until = null)
    {
        var tally = new Tally();
        try
        {
            using var source = new EventPipeEventSource(nettracePath);
            source.Dynamic.All += data =>
            {
                if (RequestStarted(data) is { } request && (until is null || data.TimeStamp.ToUniversalTime() <= until))
                {
                    tally.Add(data.ThreadID, request);
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
        return tally.Labels($"over {seconds} s", none);
    }

    /// <summary>
    /// The requests started so far: the last on each thread, and how many of each, up to <see cref="MaxCounted"/> different
    /// ones (a path with an id in it is a new one each time, and <c>watch</c> may listen to a busy service for hours); the
    /// rest are counted together under <see cref="Others"/>.
    /// </summary>
    internal sealed class Tally
    {
        public const int MaxCounted = 1000;

        public static readonly string Others = $"other requests (more than {MaxCounted} different ones)";

        private readonly Dictionary<int, string> _last = [];
        private readonly Dictionary<string, int> _started = new(StringComparer.Ordinal);

        public bool IsEmpty => _started.Count == 0;

        /// <summary>How many requests started, all of them, the ones counted under <see cref="Others"/> too.</summary>
        public int Count => _started.Values.Sum();

        /// <summary>The last request started on <paramref name="threadId"/>, or null when none has.</summary>
        public string? Last(int threadId) => _last.GetValueOrDefault(threadId);

        public void Add(int threadId, string request)
        {
            _last[threadId] = request;
            var counted = _started.Count < MaxCounted || _started.ContainsKey(request) ? request : Others;
            _started[counted] = _started.GetValueOrDefault(counted) + 1;
        }

        /// <param name="when">When they started, for the labels' source, e.g. "over 1.5 s" or "while watching".</param>
        /// <param name="none">What to say of threads that started none.</param>
        public RequestLabels Labels(string when, string none) => new(
            $"ASP.NET Core's hosting events {when} ({Count} requests started)",
            "last request started on these threads:",
            none,
            new Dictionary<int, string>(_last),
            Exact: false)
        {
            Started = new Dictionary<string, int>(_started, StringComparer.Ordinal),
        };
    }
}
