using System.CommandLine;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;

namespace DotnetBlocking;

/// <summary><c>waits</c>: the pool threads' blocking waits by call site and line, recorded live or read from a .nettrace.</summary>
internal sealed class WaitsCommand(SharedOptions shared, TextWriter output)
{
    private const string DefaultDuration = "10s";

    private readonly Argument<FileInfo?> _trace = new("trace") { Description = "A .nettrace recorded with --clrevents waithandle --clreventlevel verbose.", Arity = ArgumentArity.ZeroOrOne };

    private readonly Option<TimeSpan> _duration = SharedOptions.Duration("--duration",
        $"How long to record waits ({Durations.Help}); {DefaultDuration} by default.", allowZero: false);

    public Command Create()
    {
        var command = new Command("waits", "The blocking waits (WaitHandleWait events, .NET 9+) of pool threads by call site and line, from a live process or a .nettrace file.")
        {
            _trace, shared.ProcessId, shared.Name, shared.DiagnosticPort, shared.ConnectTimeout, _duration, shared.Format, shared.Json, shared.Output, shared.Top, shared.App, shared.Symbols,
        };
        command.Validators.Add(r => shared.RequireOneTarget(r, _trace));
        shared.RefuseSpeedscope(command);
        command.SetAction(Run);
        return command;
    }

    private int Run(ParseResult parse)
    {
        var trace = parse.GetValue(_trace);
        var options = shared.Diagnosis(parse);
        var analysis = trace is not null ? WaitAnalyzer.Analyze(trace.FullName, options) : Capture(parse, options);
        var sites = analysis.Sites.Take(parse.GetValue(shared.Top)).ToList();
        shared.Report(parse, output).Write(report => TextReport.WriteWaits(report, analysis, sites, trace?.FullName), analysis with { Sites = sites });
        return ExitCodes.Done;
    }

    private WaitAnalysis Capture(ParseResult parse, DiagnosisOptions options)
    {
        using var target = shared.Target(parse);
        return WaitAnalyzer.Capture(target, SharedOptions.ValueOr(parse, _duration, DefaultDuration), options);
    }
}
