using System.CommandLine;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common.CommandLines;
using DotnetBlocking;

// The verbs: stacks (a grouped snapshot), waits (the wait analysis, live or from a .nettrace) and watch (waits for
// starvation, then names the blocking code). Help and one-line errors follow dotnet-stack's.
// Exit codes: 0 done, 1 the process or trace could not be diagnosed (one line says why), 2 bad arguments (usage follows),
// 3 watch saw no starvation within its --timeout.
var (output, error) = (Console.Out, Console.Error);
var shared = new SharedOptions();
var root = new RootCommand("Names the code that blocks a .NET process's thread pool, down to the line: grouped stacks, wait analysis, and a watch that waits for starvation.")
{
    new StacksCommand(shared, output).Create(),
    new WaitsCommand(shared, output).Create(),
    new WatchCommand(shared, output, error).Create(),
};

var parsed = root.Parse(args);
if (parsed.Errors.Count > 0)
{
    return Usage.Explain(parsed, error);
}

try
{
    return parsed.Invoke(new InvocationConfiguration { Output = output, Error = error, EnableDefaultExceptionHandler = false });
}
catch (DiagnosisException e)
{
    error.WriteLine($"error: {e.Message}");
    return ExitCodes.Failed;
}
