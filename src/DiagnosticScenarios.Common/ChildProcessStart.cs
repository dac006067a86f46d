namespace DiagnosticScenarios.Common;

/// <summary>What to start, and what to do with its output and its end.</summary>
/// <param name="FileName">The program, a path or a name on PATH.</param>
/// <param name="Arguments">Each argument as the program receives it (no shell quoting).</param>
public sealed record ChildProcessStart(string FileName, IReadOnlyList<string> Arguments)
{
    /// <summary>Where it runs; null for the parent's current directory.</summary>
    public string? WorkingDirectory { get; init; }

    /// <summary>Environment changes: a value sets the variable, null removes the inherited one.</summary>
    public IReadOnlyDictionary<string, string?> Environment { get; init; } = new Dictionary<string, string?>();

    /// <summary>How long it may run; past it, its whole tree is killed and the result says it timed out. Null: no limit.</summary>
    public TimeSpan? TimeLimit { get; init; }

    /// <summary>Each line of standard output as it arrives, on the reader's own thread.</summary>
    public Action<string>? OnOutputLine { get; init; }

    /// <summary>Each line of standard error as it arrives, on the reader's own thread.</summary>
    public Action<string>? OnErrorLine { get; init; }

    /// <summary>Called once with the result when the process has exited and its output is read, on the watch's own thread.</summary>
    public Action<ChildProcessResult>? OnExit { get; init; }

    /// <summary>How much of each stream is kept: past it, the oldest lines go.</summary>
    public int MaxCapturedChars { get; init; } = 8 * 1024 * 1024;

    /// <summary>The command as one line, for messages.</summary>
    public string CommandLine => string.Join(' ', Arguments.Select(a => a.Contains(' ', StringComparison.Ordinal) ? $"\"{a}\"" : a).Prepend(FileName));
}

/// <summary>How a child process ended.</summary>
/// <param name="CommandLine">The command as one line.</param>
/// <param name="ExitCode">Its exit code; -1 when it could not be read (it outlived the kill).</param>
/// <param name="Output">Its standard output (the last <see cref="ChildProcessStart.MaxCapturedChars"/> characters).</param>
/// <param name="Error">Its standard error, bounded the same way.</param>
/// <param name="TimedOut">Whether it was killed at its time limit.</param>
public sealed record ChildProcessResult(string CommandLine, int ExitCode, string Output, string Error, bool TimedOut)
{
    public override string ToString() => $"{CommandLine} exited with {ExitCode}{(TimedOut ? " (killed at its time limit)" : "")}:\n{Output}\n{Error}";
}
