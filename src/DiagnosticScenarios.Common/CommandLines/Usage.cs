using System.CommandLine;

namespace DiagnosticScenarios.Common.CommandLines;

/// <summary>How both command lines answer a wrong command line: the errors, then the help of the command that was meant.</summary>
public static class Usage
{
    /// <summary>The parse's own errors, then the usage; returns <see cref="ExitCodes.BadArguments"/>.</summary>
    public static int Explain(ParseResult parsed, TextWriter error) =>
        Explain(parsed, error, parsed.Errors.Select(e => e.Message));

    /// <summary>
    /// <paramref name="errors"/>, one a line, then the library's own help of the command that was meant, as its
    /// <c>--help</c> prints it; returns <see cref="ExitCodes.BadArguments"/>.
    /// </summary>
    public static int Explain(ParseResult parsed, TextWriter error, IEnumerable<string> errors)
    {
        ArgumentNullException.ThrowIfNull(parsed);
        ArgumentNullException.ThrowIfNull(error);
        ArgumentNullException.ThrowIfNull(errors);
        foreach (var message in errors)
        {
            error.WriteLine(message);
        }

        error.WriteLine();
        var command = parsed.CommandResult.Command;
        var root = parsed.RootCommandResult.Command;
        root.Parse(command == root ? ["--help"] : [command.Name, "--help"]).Invoke(new InvocationConfiguration { Output = error });
        return ExitCodes.BadArguments;
    }
}
