using System.CommandLine;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;

namespace DotnetBlocking;

/// <summary><c>stacks</c>: a grouped snapshot of a process's threads, its blocking sites named down to the app's line.</summary>
internal sealed class StacksCommand(SharedOptions shared, TextWriter output)
{
    private const string DefaultRequestsWindow = "1s";

    private readonly Option<bool> _allThreads = new("--all-threads") { Description = "Every thread's group, not only the thread pool's." };

    private readonly Option<TimeSpan> _requestsWindow = SharedOptions.Duration("--requests-window",
        $"How long, at most, to read ASP.NET Core's request and endpoint events around the snapshot, to name the endpoint of a site whose frames a Release build's JIT inlined away ({Durations.Help}); {DefaultRequestsWindow} by default, 0s reads none (such a site is then named from the app's code where only one endpoint fits).",
        allowZero: true);

    private readonly Argument<FileInfo?> _dump = new("dump")
    {
        Description = "A core dump (dotnet-dump collect, full or heap; createdump; DiagnosticsClient.WriteDump) to read instead of a live process.",
        Arity = ArgumentArity.ZeroOrOne,
    };

    private readonly Option<string[]> _symbols = new("--symbols")
    {
        Description = "A folder holding the app's .pdb files when they are not beside its modules (repeatable).",
        HelpName = "dir",
        AllowMultipleArgumentsPerToken = false,
    };

    public Command Create()
    {
        var command = new Command("stacks", "Groups every managed thread of a process (or of a dump) by identical stack, and names the call each group is parked in, the app's line that made it, and its fix.")
        {
            _dump, shared.ProcessId, shared.Name, shared.Format, shared.Json, shared.Output, shared.Top, _allThreads, shared.App, _requestsWindow, _symbols,
        };
        command.Validators.Add(r => shared.RequireOneTarget(r, _dump, "a dump file"));
        command.SetAction(Run);
        return command;
    }

    private int Run(ParseResult parse)
    {
        var top = parse.GetValue(shared.Top);
        var options = shared.Diagnosis(parse) with { SymbolDirectories = [.. (parse.GetValue(_symbols) ?? []).Select(Path.GetFullPath)] };
        var snapshot = parse.GetValue(_dump) is { } dump ? DumpSnapshots.Analyze(dump.FullName, options) : Capture(parse, shared.Target(parse), options);
        var allSites = snapshot.BlockedPoolSites;
        var sites = allSites.Take(top).ToList();

        // The shown sites' stacks, then the largest of the rest (idle or running workers, and other threads on request),
        // so a process with nothing parked still shows what its pool is doing.
        var others = snapshot.Groups
            .Where(g => (parse.GetValue(_allThreads) || g.PoolThreads) && !allSites.Any(s => s.Groups.Contains(g)))
            .Take(top);
        var shown = snapshot with { Groups = [.. sites.SelectMany(s => s.Groups), .. others] };
        shared.Report(parse, output).Write(report => TextReport.WriteStacks(report, snapshot, sites, shown.Groups), shown,
            stream => SpeedscopeFile.Write(stream, snapshot, shown.Groups));
        return ExitCodes.Done;
    }

    // With the request events read beside it, which name the endpoint of a site a Release build's JIT inlined away.
    private StackSnapshot Capture(ParseResult parse, int pid, DiagnosisOptions options)
    {
        var window = SharedOptions.ValueOr(parse, _requestsWindow, DefaultRequestsWindow);
        return window > TimeSpan.Zero ? StackSnapshots.CaptureWithRequests(pid, window, options) : StackSnapshots.Capture(pid, options);
    }
}
