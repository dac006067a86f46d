namespace DiagnosticScenarios.Common.CommandLines;

/// <summary>The exit codes both command lines answer with; a command may add its own above these.</summary>
public static class ExitCodes
{
    public const int Done = 0;

    /// <summary>The command could not do its work; one line on standard error says why.</summary>
    public const int Failed = 1;

    /// <summary>The command line is wrong: the errors, then the usage, on standard error.</summary>
    public const int BadArguments = 2;
}
