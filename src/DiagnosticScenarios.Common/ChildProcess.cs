using System.Diagnostics;

namespace DiagnosticScenarios.Common;

/// <summary>
/// A child process of the app, the load runner or the tests: its output read on threads of its own into bounded
/// buffers, an optional time limit after which its whole tree is killed, and one result once it has exited.
/// </summary>
/// <remarks>
/// Nothing here needs the thread pool: the readers and the exit watch are dedicated threads, so a parent whose pool is
/// starved (the app, while it starves on purpose) still sees its child's output and exit at once.
/// </remarks>
public sealed class ChildProcess : IAsyncDisposable
{
    // A process the child left behind can keep its output open after the child has exited; the run is over all the same.
    private static readonly TimeSpan OutputGrace = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan KillPatience = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan ExitPoll = TimeSpan.FromMilliseconds(25);

    private readonly Process _process;
    private readonly ChildProcessStart _start;
    private readonly BoundedText _output;
    private readonly BoundedText _error;
    private readonly Thread _outputReader;
    private readonly Thread _errorReader;
    private readonly TaskCompletionSource<ChildProcessResult> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ManualResetEventSlim _killRequested = new();

    private ChildProcess(Process process, ChildProcessStart start)
    {
        _process = process;
        _start = start;
        Id = process.Id;
        CommandLine = start.CommandLine;
        _output = new BoundedText(start.MaxCapturedChars);
        _error = new BoundedText(start.MaxCapturedChars);
        _outputReader = Reader(process.StandardOutput, _output, start.OnOutputLine, "output");
        _errorReader = Reader(process.StandardError, _error, start.OnErrorLine, "error");
    }

    public int Id { get; }

    public string CommandLine { get; }

    public bool HasExited => _completion.Task.IsCompleted;

    /// <summary>Standard output so far (its last <see cref="ChildProcessStart.MaxCapturedChars"/> characters).</summary>
    public string Output => _output.ToString();

    /// <summary>Standard error so far, bounded as <see cref="Output"/>.</summary>
    public string Error => _error.ToString();

    /// <summary>Completes, from a thread of its own, once the process has exited (or was killed at its time limit) and its output is read.</summary>
    public Task<ChildProcessResult> WaitForExitAsync()
    {
#pragma warning disable VSTHRD003 // deliberate: the exit watch's own thread completes it, continuations forced off that thread
        return _completion.Task;
#pragma warning restore VSTHRD003
    }

    /// <summary>Starts the process; its output is read from now on.</summary>
    /// <exception cref="System.ComponentModel.Win32Exception">The program could not be started.</exception>
    public static ChildProcess Start(ChildProcessStart start)
    {
        ArgumentNullException.ThrowIfNull(start);
        var info = new ProcessStartInfo(start.FileName)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = false,
            WorkingDirectory = start.WorkingDirectory ?? string.Empty,
        };
        foreach (var argument in start.Arguments)
        {
            info.ArgumentList.Add(argument);
        }

        foreach (var (key, value) in start.Environment)
        {
            if (value is null)
            {
                info.Environment.Remove(key);
            }
            else
            {
                info.Environment[key] = value;
            }
        }

        var process = Process.Start(info) ?? throw new InvalidOperationException($"Could not start {start.CommandLine}.");
        var child = new ChildProcess(process, start);
        child._outputReader.Start();
        child._errorReader.Start();
        new Thread(child.WatchExit) { IsBackground = true, Name = "child-process exit" }.Start();
        return child;
    }

    /// <summary>Runs a command to its end: its result, or a <see cref="TimeoutException"/> naming it and its output once its tree is killed at <paramref name="timeout"/>.</summary>
    public static async Task<ChildProcessResult> RunAsync(ChildProcessStart start, TimeSpan timeout)
    {
        ArgumentNullException.ThrowIfNull(start);
        await using var child = Start(start with { TimeLimit = timeout });
        var result = await child.WaitForExitAsync().ConfigureAwait(false);
        return result.TimedOut
            ? throw new TimeoutException($"{result.CommandLine} did not finish within {timeout}:\n{result.Output}\n{result.Error}")
            : result;
    }

    /// <summary>Kills the process and everything it started; <see cref="WaitForExitAsync"/> then completes.</summary>
    public void Kill() => _killRequested.Set();

    /// <summary>Kills the process tree if it still runs and waits, bounded, for it to be gone.</summary>
    public async ValueTask DisposeAsync()
    {
        Kill();
        await ((Task)WaitForExitAsync()).WaitAsync(KillPatience + OutputGrace + OutputGrace).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _process.Dispose();
    }

    private static Thread Reader(StreamReader reader, BoundedText text, Action<string>? onLine, string name) =>
        new(() =>
        {
            try
            {
                while (reader.ReadLine() is { } line)
                {
                    text.AppendLine(line);
                    onLine?.Invoke(line);
                }
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException)
            {
                // The pipe went away with the process.
            }
        })
        {
            IsBackground = true,
            Name = $"child-process {name}",
        };

    private void WatchExit()
    {
        // The process's exit is not a wait handle on every OS: look every few milliseconds for it, a kill request or the limit.
        var deadline = _start.TimeLimit is { } limit ? Stopwatch.GetTimestamp() + (long)(limit.TotalSeconds * Stopwatch.Frequency) : long.MaxValue;
        var exited = false;
        while (!exited && !_killRequested.IsSet && Stopwatch.GetTimestamp() < deadline)
        {
            exited = _process.WaitForExit(ExitPoll);
        }

        var timedOut = !exited && !_killRequested.IsSet;
        if (!exited)
        {
            var tree = DiagnosticSockets.Tree(Id);
            KillTree();
            _process.WaitForExit(KillPatience);
            DiagnosticSockets.DeleteOfKilled(tree);
        }

        _outputReader.Join(OutputGrace);
        _errorReader.Join(OutputGrace);
        var result = new ChildProcessResult(CommandLine, _process.HasExited ? _process.ExitCode : -1, Output, Error, timedOut);
        _completion.SetResult(result);
        try
        {
            _start.OnExit?.Invoke(result);
        }
#pragma warning disable CA1031 // deliberate: a failing observer must not take the process watch down with it, but is not silent
        catch (Exception e)
#pragma warning restore CA1031
        {
            Console.Error.WriteLine($"The exit handler of `{CommandLine}` failed, and what it was to record of the exit is lost: {e}");
        }
    }

    private void KillTree()
    {
        try
        {
            _process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
            // It exited between the wait and the kill.
        }
    }
}
