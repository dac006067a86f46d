using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.LoadRunner.Load;

/// <summary>What to load and how hard: a closed loop (<see cref="Connections"/> clients back to back) or an open loop (<see cref="Rate"/>).</summary>
public sealed record LoadOptions
{
    /// <summary>The tutorial's load: 125 clients.</summary>
    public const int DefaultConnections = ScenarioLimits.DefaultConnections;

    /// <summary>How long a run sends when neither a duration nor a number of requests is given.</summary>
    public static readonly TimeSpan DefaultDuration = TimeSpan.FromSeconds(10);

    /// <summary>How long a request may stay unanswered before it counts as a timeout, unless told otherwise.</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(30);

    /// <summary>The absolute URL every request goes to.</summary>
    public required Uri Url { get; init; }

    /// <summary>The request method; GET unless the scenario takes a body.</summary>
    public HttpMethod Method { get; init; } = HttpMethod.Get;

    /// <summary>Each request carries a body of this many bytes; null sends none.</summary>
    public int? BodyBytes { get; init; }

    /// <summary>
    /// Each body is sent in pieces spread over this long, the way a client on a slow network uploads: the server waits for
    /// every piece. Null sends the body at once.
    /// </summary>
    public TimeSpan? UploadOver { get; init; }

    /// <summary>Concurrent keep-alive connections; in the closed loop also the number of clients.</summary>
    public int Connections { get; init; } = DefaultConnections;

    /// <summary>How long to send; with <see cref="Requests"/> the run stops at whichever comes first. Neither: <see cref="DefaultDuration"/>.</summary>
    public TimeSpan? Duration { get; init; }

    /// <summary>How many requests to send in total.</summary>
    public long? Requests { get; init; }

    /// <summary>Open loop: requests per second at fixed intended send times; latency counts from the intended time, so a stalled server cannot hide its delay (no coordinated omission).</summary>
    public double? Rate { get; init; }

    /// <summary>
    /// Closed loop: each client waits a random time from zero to this after an answer before its next request, as siege's
    /// <c>-d</c> does (the SQL article's runs used 200 ms). Null or zero: back to back.
    /// </summary>
    public TimeSpan? ThinkTime { get; init; }

    /// <summary>A request still unanswered after this long counts as a timeout.</summary>
    public TimeSpan Timeout { get; init; } = DefaultTimeout;

    /// <summary>
    /// When sending stops, how long the requests in flight may still take before they are cut off and counted as
    /// unfinished, with the time they had waited as a lower bound of their latency. Null: each one until its
    /// <see cref="Timeout"/>, as bombardier waits, which shows the long tail of a starved server; zero bounds the run to its
    /// duration; a delay or two lets the last wave of a healthy server answer and ends a starved one's run soon after.
    /// </summary>
    public TimeSpan? Drain { get; init; }

    /// <summary>How often progress is reported.</summary>
    public TimeSpan ProgressInterval { get; init; } = TimeSpan.FromSeconds(1);

    internal TimeSpan EffectiveDuration => Duration ?? (Requests is null ? DefaultDuration : TimeSpan.MaxValue);

    internal void Validate()
    {
        if (!Url.IsAbsoluteUri)
        {
            throw new ArgumentException($"The URL must be absolute: {Url}", nameof(Url));
        }

        if (Connections < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(Connections), Connections, "At least one connection.");
        }

        if (Duration is { } d && d <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(Duration), d, "The duration must be positive.");
        }

        if (Requests is { } n && n < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(Requests), n, "At least one request.");
        }

        if (Rate is { } r && (r <= 0 || double.IsNaN(r) || double.IsInfinity(r)))
        {
            throw new ArgumentOutOfRangeException(nameof(Rate), r, "The rate must be a positive number of requests per second.");
        }

        if (ThinkTime is { } think && think < TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(ThinkTime), think, "The think time cannot be negative.");
        }

        if (Rate is not null && ThinkTime is { } pause && pause > TimeSpan.Zero)
        {
            throw new ArgumentException("The open loop (--rate) sends at fixed times; a think time belongs to the closed loop.", nameof(ThinkTime));
        }

        if (BodyBytes is { } bytes && bytes < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(BodyBytes), bytes, "The body cannot have fewer than 0 bytes.");
        }

        if (UploadOver is { } over && (over <= TimeSpan.Zero || BodyBytes is null))
        {
            throw new ArgumentOutOfRangeException(nameof(UploadOver), over, "A slow upload needs a body (BodyBytes) and a positive duration.");
        }

        if (Timeout <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(Timeout), Timeout, "The timeout must be positive.");
        }
    }
}
