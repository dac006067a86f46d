using System.CommandLine;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;

namespace DotnetBlocking;

/// <summary><c>stacks</c>: a grouped snapshot of a process's threads, or of a trace dotnet-trace recorded, its blocking sites named down to the app's line.</summary>
internal sealed class StacksCommand(SharedOptions shared, TextWriter output)
{
    private const string DefaultRequestsWindow = "1s";

    private readonly Argument<FileInfo?> _file = new("file")
    {
        Description = "A file to read instead of a live process: a .nettrace recorded by dotnet-trace collect with its default profile (the snapshot is the sample whose stacks the trace saw most), or a core dump (dotnet-dump collect, full or heap; createdump; DiagnosticsClient.WriteDump).",
        Arity = ArgumentArity.ZeroOrOne,
    };

    private readonly Option<bool> _allThreads = new("--all-threads") { Description = "Every thread's group, not only the thread pool's." };

    private readonly Option<TimeSpan> _requestsWindow = SharedOptions.Duration("--requests-window",
        $"How long, at most, to read ASP.NET Core's request and endpoint events around the snapshot, to name the endpoint of a site whose frames a Release build's JIT inlined away ({Durations.Help}); {DefaultRequestsWindow} by default, 0s reads none (such a site is then named from the app's code where only one endpoint fits).",
        allowZero: true);

    public Command Create()
    {
        var command = new Command("stacks", "Groups every managed thread of a process (or of a .nettrace file or a core dump) by identical stack, and names the call each group is parked in, the app's line that made it, and its fix.")
        {
            _file, shared.ProcessId, shared.Name, shared.DiagnosticPort, shared.ConnectTimeout, shared.Format, shared.Json, shared.Output, shared.Top, _allThreads, shared.App, shared.Symbols, _requestsWindow,
        };
        command.Validators.Add(r => shared.RequireOneTarget(r, _file, "a .nettrace file or a dump"));
        command.SetAction(Run);
        return command;
    }

    private int Run(ParseResult parse)
    {
        var top = parse.GetValue(shared.Top);
        var file = parse.GetValue(_file);
        var options = shared.Diagnosis(parse);
        var snapshot = file is null ? Capture(parse, options) : StackSnapshots.FromFile(file.FullName, options);
        var allSites = snapshot.BlockedPoolSites;
        var sites = allSites.Take(top).ToList();

        // The shown sites' stacks, then the largest of the rest (idle or running workers, and other threads on request),
        // so a process with nothing parked still shows what its pool is doing.
        var others = snapshot.Groups
            .Where(g => (parse.GetValue(_allThreads) || g.PoolThreads) && !allSites.Any(s => s.Groups.Contains(g)))
            .Take(top);
        var shown = snapshot with { Groups = [.. sites.SelectMany(s => s.Groups), .. others] };
        shared.Report(parse, output).Write(report => TextReport.WriteStacks(report, snapshot, sites, shown.Groups, file?.FullName), shown,
            stream => SpeedscopeFile.Write(stream, snapshot, shown.Groups));
        return ExitCodes.Done;
    }

    // With the request events read beside it, which name the endpoint of a site a Release build's JIT inlined away.
    private StackSnapshot Capture(ParseResult parse, DiagnosisOptions options)
    {
        var window = SharedOptions.ValueOr(parse, _requestsWindow, DefaultRequestsWindow);
        using var target = shared.Target(parse);
        return window > TimeSpan.Zero ? StackSnapshots.CaptureWithRequests(target, window, options) : StackSnapshots.Capture(target, options);
    }
}
