using System.CommandLine;
using System.CommandLine.Help;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common.CommandLines;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary>The <c>run</c>, <c>compare</c> and <c>render</c> commands. A wrong command line answers the errors and the usage on stderr, exit code 2.</summary>
public static class CommandLine
{
    /// <summary>Ctrl+C: the shell's code for a command ended by SIGINT.</summary>
    public const int Cancelled = 130;

    internal const string Name = "DiagnosticScenarios.LoadRunner";

    public static async Task<int> RunAsync(string[] args, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        using var cancel = new CancellationTokenSource();
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            cancel.Cancel();
        };

        var parsed = Root(output, error, args).Parse(args);
        if (parsed.Errors.Count > 0)
        {
            return Usage.Explain(parsed, error);
        }

        try
        {
            return await parsed.InvokeAsync(new InvocationConfiguration { Output = output, Error = error, EnableDefaultExceptionHandler = false }, cancel.Token);
        }
        catch (Exception e) when (e is UsageException or UnknownScenarioException)
        {
            return Usage.Explain(parsed, error, [e.Message]);
        }
        catch (Exception e) when (e is ServerStartException or MeasurementException or DiagnosisException)
        {
            // A comparison that could not be measured: a server that would not start, a scenario that failed its warm-up,
            // a server --diagnose could not open a session on.
            await error.WriteLineAsync(e.Message);
            return ExitCodes.Failed;
        }
        catch (OperationCanceledException) when (cancel.IsCancellationRequested)
        {
            await error.WriteLineAsync("Cancelled.");
            return Cancelled;
        }
    }

    private static Command Root(TextWriter output, TextWriter error, string[] args)
    {
        var root = new Command(Name, "Loads DiagnosticScenarios from a process of its own, and compares its scenarios on fresh servers.")
        {
            new HelpOption { Recursive = true },
            new RunCommand(output, error).Create(),
            new CompareCommand(output, error, string.Join(' ', args.Select(a => a.Contains(' ', StringComparison.Ordinal) ? $"\"{a}\"" : a))).Create(),
            new RenderCommand(output, error).Create(),
        };
        root.SetAction(parse => Usage.Explain(parse, error, ["No command."]));
        return root;
    }
}

/// <summary>The command line is wrong in a way only the command itself can tell (an app that is not there, a file that is not a report).</summary>
internal sealed class UsageException(string message) : Exception(message);
