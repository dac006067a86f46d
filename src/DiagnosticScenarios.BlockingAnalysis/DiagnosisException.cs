namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>Why a process could not be diagnosed.</summary>
public enum DiagnosisFailure
{
    /// <summary>No process with that id or name.</summary>
    ProcessNotFound,

    /// <summary>Several processes have that name.</summary>
    AmbiguousName,

    /// <summary>The process runs, but publishes no .NET diagnostic port.</summary>
    NotDotNet,

    /// <summary>The process publishes a diagnostic port, but the session could not be opened or read.</summary>
    PortUnreachable,

    /// <summary>A trace file that cannot be read.</summary>
    UnreadableTrace,

    /// <summary>A session's trace that could not be written to its file (a full disk, a folder this user cannot write).</summary>
    TraceNotWritten,

    /// <summary>The process exited while a session was reading it.</summary>
    ProcessExited,

    /// <summary>No runtime connected, within the time allowed, to the diagnostic port this tool listened on.</summary>
    NoRuntimeConnected,

    /// <summary>The report's file (<c>--output</c>) could not be created: a folder this user cannot write, a full disk.</summary>
    ReportNotWritten,

    /// <summary>A dump that cannot be read: not a dump, cut short, of a process without .NET, or its runtime's DAC is not here.</summary>
    UnreadableDump,

    /// <summary>A dump the runtime could not write (its port did not answer, createdump failed), or whose folder could not be made.</summary>
    DumpNotWritten,
}

/// <summary>A diagnosis that could not be made; the message is one line saying which and what to do.</summary>
public sealed class DiagnosisException : Exception
{
    public DiagnosisException()
    {
    }

    public DiagnosisException(string message)
        : base(message)
    {
    }

    public DiagnosisException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    public DiagnosisException(DiagnosisFailure failure, string message, Exception? innerException = null)
        : base(message, innerException)
    {
        Failure = failure;
    }

    public DiagnosisFailure Failure { get; }
}
