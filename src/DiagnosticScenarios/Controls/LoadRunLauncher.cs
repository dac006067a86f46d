using System.Diagnostics;
using System.Text;
using DiagnosticScenarios.Catalogue;

namespace DiagnosticScenarios.Controls;

/// <summary>
/// Starts the load runner (<c>DiagnosticScenarios.LoadRunner run --url URL -c N -d Ns --json</c>) as a child
/// process for the live page: the load must come from another process, never from the pool it is meant to starve.
/// One run at a time, bounded in connections and duration, killed if it overstays.
/// </summary>
public sealed partial class LoadRunLauncher(IConfiguration configuration, ILogger<LoadRunLauncher> logger) : IDisposable
{
    public const int MaxConnections = 500;
    public const int MaxDurationSeconds = 120;
    private const int MaxOutputChars = 64 * 1024;

    // A process the runner left behind can hold its output open after it has exited; the run is over all the same.
    private static readonly TimeSpan OutputGrace = TimeSpan.FromSeconds(2);

    // What the runner may be pointed at: the catalogue's loadable scenarios, never an arbitrary URL.
    public static readonly IReadOnlyList<string> Scenarios = [.. ScenarioCatalogue.Loadable.Select(s => s.Route.TrimStart('/')["api/".Length..])];

    private readonly Lock _lock = new();
    private LoadRun? _current;
    private Process? _process;

    /// <summary>Where the runner is: <c>LoadRunner:Path</c>, else the runner project's build output beside this app's.</summary>
    public string RunnerPath => LoadRunnerLocation.Find(configuration);

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

    /// <summary>Starts a run; when one is already running, returns that run and <c>Started: false</c>.</summary>
    public (LoadRun Run, bool Started) Start(string scenario, Uri target, int connections, int durationSeconds)
    {
        lock (_lock)
        {
            if (_current is { Running: true })
            {
                return (_current, false);
            }

            var runner = RunnerPath;
            if (!File.Exists(runner))
            {
                throw new FileNotFoundException($"The load runner is not at '{runner}'. Build src/DiagnosticScenarios.LoadRunner with the same configuration as the app, or set LoadRunner:Path.", runner);
            }

            var start = new ProcessStartInfo
            {
                FileName = runner.EndsWith(".dll", StringComparison.OrdinalIgnoreCase) ? "dotnet" : runner,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            if (runner.EndsWith(".dll", StringComparison.OrdinalIgnoreCase))
            {
                start.ArgumentList.Add(runner);
            }

            foreach (var argument in new[] { "run", "--url", target.ToString(), "-c", connections.ToString(System.Globalization.CultureInfo.InvariantCulture), "-d", $"{durationSeconds}s", "--json" })
            {
                start.ArgumentList.Add(argument);
            }

            var process = Process.Start(start) ?? throw new InvalidOperationException($"The load runner at '{runner}' did not start.");
            _process?.Dispose();
            _process = process;
            _current = new LoadRun(scenario, target.ToString(), connections, durationSeconds, DateTimeOffset.UtcNow, process.Id, Running: true, ExitCode: null, Output: null, Error: null);
            LogStarted(logger, process.Id, target, connections, durationSeconds);
            // Not awaited: the request answers 202 at once; the watcher records the exit and enforces the time limit.
            _ = WatchAsync(process, _current, TimeSpan.FromSeconds(durationSeconds + 30));
            return (_current, true);
        }
    }

    /// <summary>Stops the run in progress, if any.</summary>
    public LoadRun? Stop()
    {
        lock (_lock)
        {
            Kill(_process);
            return _current;
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            Kill(_process);
            _process?.Dispose();
            _process = null;
        }
    }

    private async Task WatchAsync(Process process, LoadRun run, TimeSpan limit)
    {
        var output = ReadBoundedAsync(process.StandardOutput);
        var error = ReadBoundedAsync(process.StandardError);
        int? exitCode = null;
        string? failure = null;
        try
        {
            using var overstay = new CancellationTokenSource(limit);
            try
            {
                await process.WaitForExitAsync(overstay.Token);
            }
            catch (OperationCanceledException)
            {
                Kill(process);
                await process.WaitForExitAsync(CancellationToken.None);
            }

            exitCode = process.ExitCode;
            LogFinished(logger, run.ProcessId, exitCode.Value);
        }
#pragma warning disable CA1031 // deliberate: whatever went wrong, the run is over and a new one must be able to start
        catch (Exception e)
#pragma warning restore CA1031
        {
            // The app is shutting down and disposed the process, or watching it failed: the run ends without an exit code.
            failure = e.Message;
        }
        finally
        {
            var finished = run with
            {
                Running = false,
                ExitCode = exitCode,
                Output = await CollectAsync(output),
                Error = failure is null ? await CollectAsync(error) : $"{await CollectAsync(error)}\n{failure}".Trim(),
            };
            lock (_lock)
            {
                if (ReferenceEquals(_current, run))
                {
                    _current = finished;
                }
            }
        }
    }

    private static async Task<string?> CollectAsync(Task<string> read)
    {
        try
        {
            return await read.WaitAsync(OutputGrace);
        }
        catch (Exception e) when (e is TimeoutException or IOException or ObjectDisposedException or InvalidOperationException)
        {
            return null;
        }
    }

    private static async Task<string> ReadBoundedAsync(StreamReader reader)
    {
        var text = new StringBuilder();
        var buffer = new char[4096];
        int read;
        while ((read = await reader.ReadAsync(buffer)) > 0)
        {
            if (text.Length < MaxOutputChars)
            {
                text.Append(buffer, 0, Math.Min(read, MaxOutputChars - text.Length));
            }
        }

        return text.ToString();
    }

    private static void Kill(Process? process)
    {
        try
        {
            if (process is { HasExited: false })
            {
                process.Kill(entireProcessTree: true);
            }
        }
        catch (InvalidOperationException)
        {
            // It exited between the check and the kill.
        }
    }

    [LoggerMessage(EventId = 5101, Level = LogLevel.Information, Message = "Load runner {ProcessId} started against {Target} with {Connections} connections for {DurationSeconds} s")]
    private static partial void LogStarted(ILogger logger, int processId, Uri target, int connections, int durationSeconds);

    [LoggerMessage(EventId = 5102, Level = LogLevel.Information, Message = "Load runner {ProcessId} exited with code {ExitCode}")]
    private static partial void LogFinished(ILogger logger, int processId, int exitCode);
}

/// <summary>A load run started from the page; <see cref="Output"/> is the runner's JSON summary once it has finished.</summary>
public sealed record LoadRun(string Scenario, string Target, int Connections, int DurationSeconds, DateTimeOffset StartedAt, int ProcessId, bool Running, int? ExitCode, string? Output, string? Error);
