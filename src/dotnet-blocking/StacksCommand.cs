using System.CommandLine;
using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;

namespace DotnetBlocking;

/// <summary><c>stacks</c>: a grouped snapshot of a process's threads, its blocking sites named down to the app's line.</summary>
internal sealed class StacksCommand(SharedOptions shared, TextWriter output, TextWriter error)
{
    private const string DefaultRequestsWindow = "3s";

    private readonly Option<bool> _allThreads = new("--all-threads") { Description = "Every thread's group, not only the thread pool's." };

    private readonly Option<TimeSpan> _requestsWindow = SharedOptions.Duration("--requests-window",
        $"When a blocking site has no app frame (a Release build's JIT inlined it), how long to record ASP.NET Core's hosting events to tie its threads to requests before a second snapshot ({Durations.Help}); {DefaultRequestsWindow} by default, 0s turns it off.",
        allowZero: true);

    public Command Create()
    {
        var command = new Command("stacks", "Groups every managed thread of a process by identical stack, and names the call each group is parked in, the app's line that made it, and its fix.")
        {
            shared.ProcessId, shared.Name, shared.Format, shared.Json, shared.Output, shared.Top, _allThreads, shared.App, _requestsWindow,
        };
        command.Validators.Add(r => shared.RequireOneTarget(r));
        command.SetAction(Run);
        return command;
    }

    private int Run(ParseResult parse)
    {
        var top = parse.GetValue(shared.Top);
        var snapshot = Capture(parse, shared.Target(parse), shared.Diagnosis(parse), top);
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

    // A second snapshot, with the requests of a window of hosting events, when a shown site has no app frame to name it by.
    private StackSnapshot Capture(ParseResult parse, int pid, DiagnosisOptions options, int top)
    {
        var snapshot = StackSnapshots.Capture(pid, options);
        var window = SharedOptions.ValueOr(parse, _requestsWindow, DefaultRequestsWindow);
        var unnamed = snapshot.BlockedPoolSites.Take(top).Count(s => s.AppFrames.Count == 0);
        if (unnamed == 0 || window <= TimeSpan.Zero)
        {
            return snapshot;
        }

        error.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{unnamed} blocking site{(unnamed == 1 ? " has" : "s have")} no app frame: recording {window.TotalSeconds:0.#} s of ASP.NET Core's hosting events to tie {(unnamed == 1 ? "its" : "their")} threads to requests, then a second snapshot."));
        return StackSnapshots.CaptureWithRequests(pid, window, options);
    }
}
