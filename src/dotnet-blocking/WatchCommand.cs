using System.CommandLine;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;

namespace DotnetBlocking;

/// <summary><c>watch</c>: reads a process's counters once a second until it starves, then names its blocking code.</summary>
internal sealed class WatchCommand(SharedOptions shared, TextWriter output, TextWriter error)
{
    /// <summary>No starvation within <c>--timeout</c>.</summary>
    public const int NoStarvation = 3;

    private const string DefaultTimeout = "10m";

    private readonly Option<TimeSpan> _timeout = SharedOptions.Duration("--timeout",
        $"How long to wait for starvation before giving up (exit code 3): {Durations.Help}; {DefaultTimeout} by default.", allowZero: false);

    private readonly Option<DirectoryInfo?> _dump = new("--dump")
    {
        Description = "Also write a dump of the process into this folder at the moment starvation is declared (as dotnet-monitor's CollectDump action); the report names the file, and stacks FILE reads it back.",
        HelpName = "dir",
    };

    private readonly Option<string> _dumpType = new("--dump-type")
    {
        Description = $"The kind of dump --dump writes, as dotnet-dump collect names them: {string.Join(", ", ProcessDumps.Types.Keys)}; heap by default.",
        HelpName = "type",
        DefaultValueFactory = _ => "heap",
    };

    public Command Create()
    {
        var command = new Command("watch", $"Waits for thread-pool starvation (a long queue whose items wait for a thread while the CPU stays under {StarvationRule.Default.MaxCpuPercent:0} %, read from the runtime's counters once a second), then names the blocking code at that moment.")
        {
            shared.ProcessId, shared.Name, shared.DiagnosticPort, shared.ConnectTimeout, _timeout, shared.Format, shared.Json, shared.Output, shared.Top, shared.App, shared.Symbols, _dump, _dumpType,
        };
        _dumpType.AcceptOnlyFromAmong([.. ProcessDumps.Types.Keys]);
        command.Validators.Add(r => shared.RequireOneTarget(r));
        shared.RefuseSpeedscope(command);
        command.SetAction(Run);
        return command;
    }

    private int Run(ParseResult parse)
    {
        using var target = shared.Target(parse);
        var patience = SharedOptions.ValueOr(parse, _timeout, DefaultTimeout);

        // The seconds as they are read go to standard error, whatever the report's format: progress, not the answer. The
        // first line once the session is on: from then on the process is watched.
        var result = StarvationWatch.Run(target, patience, (second, verdict) => TextReport.WriteSecond(error, second, verdict), options: shared.Diagnosis(parse),
            onWatching: () => TextReport.WriteWatchStart(error, target.Name, StarvationRule.Default, patience),
            onStarved: parse.GetValue(_dump) is { } folder ? () => ProcessDumps.Write(target, folder.FullName, ProcessDumps.Types[parse.GetValue(_dumpType)!]) : null);
        var sites = result.Snapshot?.BlockedPoolSites.Take(parse.GetValue(shared.Top)).ToList() ?? [];
        var shown = result with { Snapshot = result.Snapshot is { } s ? s with { Groups = [.. sites.SelectMany(site => site.Groups)] } : null };
        shared.Report(parse, output).Write(report => TextReport.WriteWatch(report, result, sites, patience), shown);
        return result.Starved ? ExitCodes.Done : NoStarvation;
    }
}
