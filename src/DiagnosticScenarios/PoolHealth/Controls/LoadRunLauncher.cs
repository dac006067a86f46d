using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Scenarios.Catalogue;

namespace DiagnosticScenarios.PoolHealth.Controls;

/// <summary>
/// Starts the load runner (<c>DiagnosticScenarios.LoadRunner run --url URL -c N -d Ns --timeout 90s --json</c>, with the
/// scenario's method and slow upload when the catalogue gives it a body) as a child
/// process for the live page: the load must come from another process, never from the pool it is meant to starve.
/// One run at a time, bounded in connections and duration, killed if it overstays. The run's end is seen on a thread of
/// its own, so the page learns it even while the pool is still starved.
/// </summary>
public sealed partial class LoadRunLauncher(IConfiguration configuration, ILogger<LoadRunLauncher> logger) : IDisposable
{
    /// <summary>The bounds and defaults of a page-started run: the API holds a request to them and the page's form reads them.</summary>
    public static LoadLimits Limits { get; } = new(DefaultConnections: ScenarioLimits.DefaultConnections, MaxConnections: 500, DefaultDurationSeconds: 30, MaxDurationSeconds: 120);

    /// <summary>
    /// How long each request of a page-started run may wait for its answer. Under tasksleepwait at 125 connections on two
    /// processors the first answers come after about a minute; the runner's own default of 30 s would count them all as
    /// timeouts, and 60 s leaves no margin.
    /// </summary>
    public static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(90);

    private const int MaxOutputChars = 64 * 1024;

    /// <summary>The end of a run stopped with <c>DELETE /api/threadpool/load</c> (the page's Stop), which the killed runner cannot report itself.</summary>
    public const string StoppedOnRequest = "Stopped on request (DELETE /api/threadpool/load) before it could report.";

    // The run may drain its requests for a request timeout after its duration; past that, it is killed.
    private static readonly TimeSpan Overstay = RequestTimeout + TimeSpan.FromSeconds(10);

    // What the runner may be pointed at: the catalogue's loadable scenarios, never an arbitrary URL.
    public static readonly IReadOnlyList<string> Scenarios = [.. ScenarioCatalogue.Loadable.Select(s => s.Route.TrimStart('/')["api/".Length..])];

    private readonly Lock _lock = new();
    private LoadRun? _current;
    private ChildProcess? _process;

    // Set when the run in progress is stopped on request, so that its end says so instead of an exit code alone.
    private bool _stopRequested;

    // Where the runner was found: it stays there for the process's life, and the page asks for the status every second.
    private string? _foundRunner;

    /// <summary>Where the runner is: <c>LoadRunner:Path</c>, else the published runner beside this app, else the runner project's build output beside this app's.</summary>
    public string RunnerPath
    {
        get
        {
            if (_foundRunner is { } found)
            {
                return found;
            }

            // Looked for again until it is there: the runner may be built after the app started.
            var path = LoadRunnerLocation.Find(configuration);
            if (File.Exists(path))
            {
                _foundRunner = path;
            }

            return path;
        }
    }

    public LoadRun? Current
    {
        get
        {
            lock (_lock)
            {
                return _current;
            }
        }
    }

    /// <summary>The answer of <c>GET /api/threadpool/load</c>, on the app and on the live page's server.</summary>
    public LoadStatus Status() => new(Current, RunnerPath, Scenarios, Limits);

    /// <summary>Starts a run; when one is already running, returns that run and <c>Started: false</c>.</summary>
    /// <exception cref="LoadRunnerUnavailableException">The runner is not where <see cref="RunnerPath"/> says, or cannot be run.</exception>
    public (LoadRun Run, bool Started) Start(string scenario, Uri target, int connections, int durationSeconds)
    {
        ArgumentNullException.ThrowIfNull(target);
        lock (_lock)
        {
            if (_current is { Running: true })
            {
                return (_current, false);
            }

            var runner = RunnerPath;
            if (!File.Exists(runner))
            {
                throw new LoadRunnerUnavailableException($"The load runner is not at '{runner}'. Build the solution (or src/DiagnosticScenarios.LoadRunner) with the same configuration as the app, publish the app (its {LoadRunnerLocation.PublishedFolder}/ folder holds the runner), or set {LoadRunnerLocation.ConfigurationKey}.");
            }

            var isDll = runner.EndsWith(".dll", StringComparison.OrdinalIgnoreCase);
            string[] arguments =
            [
                .. isDll ? [runner] : Array.Empty<string>(),
                "run", "--url", target.ToString(), "-c", connections.ToString(CultureInfo.InvariantCulture), "-d", $"{durationSeconds}s",
                "--timeout", $"{RequestTimeout.TotalSeconds}s", .. BodyArguments(scenario), "--json",
            ];
            LoadRun? run = null;
            ChildProcess process;
            try
            {
                process = ChildProcess.Start(new ChildProcessStart(isDll ? DotnetHost.Command : runner, arguments)
                {
                    TimeLimit = TimeSpan.FromSeconds(durationSeconds) + Overstay,
                    MaxCapturedChars = MaxOutputChars,
                    // Start holds the lock until the run is recorded, so Finished, which takes it first, always sees the run.
                    OnExit = result => Finished(() => run!, result),
                });
            }
            catch (System.ComponentModel.Win32Exception e)
            {
                // Not executable (no execute bit, a file of another kind), or dotnet not found for a .dll.
                throw new LoadRunnerUnavailableException($"The load runner at '{runner}' could not start: {e.Message}. Point {LoadRunnerLocation.ConfigurationKey} at the runner's executable or its .dll.", e);
            }

            _process = process;
            _stopRequested = false;
            run = new LoadRun(scenario, target.ToString(), connections, durationSeconds, DateTimeOffset.UtcNow, process.Id, Running: true, EndedAt: null, ExitCode: null, Result: null, Error: null);
            _current = run;
            LogStarted(logger, process.Id, target, connections, durationSeconds);
            return (run, true);
        }
    }

    /// <summary>Stops the run in progress, if any.</summary>
    public LoadRun? Stop()
    {
        lock (_lock)
        {
            if (_current is { Running: true })
            {
                _stopRequested = true;
                _process?.Kill();
            }

            return _current;
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            _process?.Kill();
        }
    }

    private void Finished(Func<LoadRun> started, ChildProcessResult exit)
    {
        LoadRun run;
        bool stopped;
        lock (_lock)
        {
            run = started();
            stopped = _stopRequested;
        }

        LogFinished(logger, run.ProcessId, exit.ExitCode);
        var finished = run with
        {
            Running = false,
            EndedAt = DateTimeOffset.UtcNow,
            ExitCode = exit.ExitCode,
            Result = exit.ExitCode == 0 ? ParseReport(exit.Output) : null,
            Error = exit.ExitCode == 0 ? null : $"{(stopped ? StoppedOnRequest + "\n" : "")}{exit.Error}{(exit.TimedOut ? $"\nKilled: the run overstayed its {Overstay.TotalSeconds:0} s past its duration." : "")}".Trim(),
        };
        lock (_lock)
        {
            // A run that was replaced meanwhile (it cannot be: one at a time) keeps the newer one current.
            if (ReferenceEquals(_current, run))
            {
                _current = finished;
            }
        }
    }

    // A scenario whose requests carry a body is loaded the way the catalogue says: its method and a slow upload of its body.
    private static string[] BodyArguments(string scenario) =>
        ScenarioCatalogue.Loadable.FirstOrDefault(s => s.Route == "/api/" + scenario)?.Load is { } load
            ? ["--method", load.Method, "--body-bytes", load.BodyBytes.ToString(CultureInfo.InvariantCulture), "--upload-over", $"{load.UploadMs.ToString(CultureInfo.InvariantCulture)}ms"]
            : [];

    // The runner's --json report, as it wrote it; a run that was stopped or printed something else has none.
    private static JsonElement? ParseReport(string output)
    {
        try
        {
            return JsonSerializer.Deserialize<JsonElement>(output);
        }
        catch (JsonException)
        {
            return null;
        }
    }

    [LoggerMessage(EventId = 5301, Level = LogLevel.Information, Message = "Load runner {ProcessId} started against {Target} with {Connections} connections for {DurationSeconds} s")]
    private static partial void LogStarted(ILogger logger, int processId, Uri target, int connections, int durationSeconds);

    [LoggerMessage(EventId = 5302, Level = LogLevel.Information, Message = "Load runner {ProcessId} exited with code {ExitCode}")]
    private static partial void LogFinished(ILogger logger, int processId, int exitCode);
}

/// <summary>The load run started from the page, if any, where the runner is, the scenarios it can target and the bounds of a run.</summary>
public sealed record LoadStatus(LoadRun? Current, string RunnerPath, IReadOnlyList<string> Scenarios, LoadLimits Limits);

/// <summary>How many connections and seconds a page-started run takes when the request names none, and the most it may ask for.</summary>
public sealed record LoadLimits(int DefaultConnections, int MaxConnections, int DefaultDurationSeconds, int MaxDurationSeconds);

/// <summary>A load run started from the page; <see cref="Result"/> is the runner's JSON report once it has finished.</summary>
/// <param name="Scenario">The scenario, as the load control names it (<c>diagscenario/taskwait</c>).</param>
/// <param name="Target">The URL loaded.</param>
/// <param name="Connections">Concurrent connections.</param>
/// <param name="DurationSeconds">How long it sends.</param>
/// <param name="StartedAt">When the runner started.</param>
/// <param name="ProcessId">The runner's process id.</param>
/// <param name="Running">Whether the runner still runs.</param>
/// <param name="EndedAt">When the runner exited (or was stopped); null while it runs.</param>
/// <param name="ExitCode">The runner's exit code once it has exited.</param>
/// <param name="Result">The runner's report (req/s, latency, status codes, errors), when it exited normally.</param>
/// <param name="Error">What the runner said when it failed, or why it was killed.</param>
public sealed record LoadRun(
    string Scenario,
    string Target,
    int Connections,
    int DurationSeconds,
    DateTimeOffset StartedAt,
    int ProcessId,
    bool Running,
    DateTimeOffset? EndedAt,
    int? ExitCode,
    JsonElement? Result,
    string? Error);

/// <summary>The load runner is not where the app looks for it, or cannot be started there: the Start load answers 503.</summary>
public sealed class LoadRunnerUnavailableException(string message, Exception? innerException = null) : Exception(message, innerException);
