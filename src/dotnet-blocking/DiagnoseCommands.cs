using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using System.Text.Json;
using System.Text.Json.Serialization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;

namespace DotnetBlocking;

/// <summary>The verbs: <c>stacks</c> (a grouped snapshot of a process), <c>waits</c> (the wait analysis, live or from a .nettrace) and <c>watch</c> (waits for starvation, then names the blocking code).</summary>
/// <remarks>Installed as the .NET tool <c>dotnet-blocking</c>; its help and one-line errors follow dotnet-stack's.</remarks>
public static class DiagnoseCommands
{
    public const int Failed = 1;
    public const int BadArguments = 2;

    /// <summary><c>watch</c>: no starvation within <c>--timeout</c>.</summary>
    public const int NoStarvation = 3;

    // The duration options' defaults, as their help says them ("3s") and as the verbs use them.
    private const string DefaultRequestsWindow = "1s";
    private const string DefaultWaitsDuration = "10s";
    private const string DefaultWatchTimeout = "10m";

    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { WriteIndented = true, DefaultIgnoreCondition = JsonIgnoreCondition.Never };

    public static int Run(string[] args, TextWriter output, TextWriter error)
    {
        var root = Build(output, error);
        var parsed = root.Parse(args);
        if (parsed.Errors.Count > 0)
        {
            foreach (var e in parsed.Errors)
            {
                error.WriteLine(e.Message);
            }

            var help = parsed.CommandResult.Command == root ? [] : new[] { parsed.CommandResult.Command.Name };
            root.Parse([.. help, "--help"]).Invoke(new InvocationConfiguration { Output = error });
            return BadArguments;
        }

        try
        {
            return parsed.Invoke(new InvocationConfiguration { Output = output, Error = error, EnableDefaultExceptionHandler = false });
        }
        catch (DiagnosisException e)
        {
            error.WriteLine($"error: {e.Message}");
            return Failed;
        }
    }

    private static RootCommand Build(TextWriter output, TextWriter error)
    {
        var processId = new Option<int?>("--process-id", "-p")
        {
            Description = "The process id to diagnose.",
            HelpName = "pid",
            CustomParser = ParseProcessId,
        };
        var name = new Option<string?>("--name", "-n") { Description = "The name of the process to diagnose, e.g. DiagnosticScenarios." };
        name.Validators.Add(r =>
        {
            if (string.IsNullOrWhiteSpace(r.GetValueOrDefault<string?>()))
            {
                r.AddError("--name needs a process name, e.g. DiagnosticScenarios.");
            }
        });
        var format = new Option<ReportFormat>("--format")
        {
            Description = "text (the default), json for scripts, or speedscope (stacks only: a file https://www.speedscope.app opens).",
            HelpName = "text|json|speedscope",
            CustomParser = ParseFormat,
        };
        var json = new Option<bool>("--json") { Description = "The same as --format json." };
        var outputFile = new Option<FileInfo?>("--output", "-o") { Description = "Write the report to this file instead of the console." };
        var top = new Option<int>("--top") { Description = "How many blocking sites (stacks) or wait sites to show.", DefaultValueFactory = _ => 5 };
        var allThreads = new Option<bool>("--all-threads") { Description = "Every thread's group, not only the thread pool's." };
        var app = new Option<string[]>("--app")
        {
            Description = "A namespace or assembly name whose frames are the app's (repeatable). Without it, a frame is the app's when its module is not the runtime, the shared framework or a package.",
            AllowMultipleArgumentsPerToken = false,
        };
        var requestsWindow = new Option<TimeSpan>("--requests-window")
        {
            Description = $"How long, at most, to read ASP.NET Core's request and endpoint events around the snapshot, to name the endpoint of a site whose frames a Release build's JIT inlined away ({Durations.Help}); {DefaultRequestsWindow} by default, 0s reads none (such a site is then named from the app's code where only one endpoint fits).",
            HelpName = "duration",
            CustomParser = r => ParseDuration(r, allowZero: true),
        };
        var duration = new Option<TimeSpan>("--duration")
        {
            Description = $"How long to record waits ({Durations.Help}); {DefaultWaitsDuration} by default.",
            HelpName = "duration",
            CustomParser = r => ParseDuration(r, allowZero: false),
        };
        var file = new Argument<FileInfo?>("trace") { Description = "A .nettrace recorded with --clrevents waithandle --clreventlevel verbose.", Arity = ArgumentArity.ZeroOrOne };

        app.Validators.Add(r =>
        {
            if ((r.GetValueOrDefault<string[]>() ?? []).Any(string.IsNullOrWhiteSpace))
            {
                r.AddError("--app needs a namespace or an assembly name, e.g. --app Contoso.Orders.");
            }
        });
        top.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<int>() < 1)
            {
                r.AddError("--top must be 1 or more.");
            }
        });
        // Checked before the capture, so that no one waits for a session whose report has nowhere to go.
        outputFile.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<FileInfo?>() is not { } target)
            {
                return;
            }

            if (Directory.Exists(target.FullName))
            {
                r.AddError($"--output names a folder, {target.FullName}: give a file's path.");
            }
            else if (target.Directory is { Exists: false } folder)
            {
                r.AddError($"--output's folder {folder.FullName} does not exist: create it, or give a path in a folder that does.");
            }
        });

        var stacks = new Command("stacks", "Groups every managed thread of a process by identical stack, and names the call each group is parked in, the app's line that made it, and its fix.")
        {
            processId, name, format, json, outputFile, top, allThreads, app, requestsWindow,
        };
        stacks.Validators.Add(r => RequireOneTarget(r, processId, name, null));
        stacks.SetAction(parse =>
        {
            var pid = Target(parse, processId, name);
            var options = Options(parse, app);
            var window = ValueOr(parse, requestsWindow, DefaultRequestsWindow);
            var snapshot = window > TimeSpan.Zero ? StackSnapshots.CaptureWithRequests(pid, window, options) : StackSnapshots.Capture(pid, options);

            var allSites = snapshot.BlockedPoolSites;
            var sites = allSites.Take(parse.GetValue(top)).ToList();

            // The shown sites' stacks, then the largest of the rest (idle or running workers, and other threads on request),
            // so a process with nothing parked still shows what its pool is doing.
            var siteGroups = sites.SelectMany(s => s.Groups).ToList();
            var others = snapshot.Groups
                .Where(g => (parse.GetValue(allThreads) || g.PoolThreads) && !allSites.Any(s => s.Groups.Contains(g)))
                .Take(parse.GetValue(top));
            var shown = snapshot with { Groups = [.. siteGroups, .. others] };
            Write(parse, format, json, outputFile, output, report => TextReport.WriteStacks(report, snapshot, sites, shown.Groups), shown,
                stream => SpeedscopeFile.Write(stream, snapshot, shown.Groups));
            return 0;
        });

        var waits = new Command("waits", "The blocking waits (WaitHandleWait events, .NET 9+) of pool threads by call site and line, from a live process or a .nettrace file.")
        {
            file, processId, name, duration, format, json, outputFile, top, app,
        };
        waits.Validators.Add(r => RequireOneTarget(r, processId, name, file));
        waits.Validators.Add(r =>
        {
            if (AsksForSpeedscope(r, format))
            {
                r.AddError("--format speedscope is for stacks; waits writes text or json.");
            }
        });
        waits.SetAction(parse =>
        {
            var trace = parse.GetValue(file);
            var options = Options(parse, app);
            var analysis = trace is not null
                ? WaitAnalyzer.Analyze(trace.FullName, options)
                : WaitAnalyzer.Capture(Target(parse, processId, name), ValueOr(parse, duration, DefaultWaitsDuration), options);
            var sites = analysis.Sites.Take(parse.GetValue(top)).ToList();
            Write(parse, format, json, outputFile, output, report => TextReport.WriteWaits(report, analysis, sites, trace?.FullName), analysis with { Sites = sites }, null);
            return 0;
        });

        var timeout = new Option<TimeSpan>("--timeout")
        {
            Description = $"How long to wait for starvation before giving up (exit code 3): {Durations.Help}; {DefaultWatchTimeout} by default.",
            HelpName = "duration",
            CustomParser = r => ParseDuration(r, allowZero: false),
        };
        var watch = new Command("watch", $"Waits for thread-pool starvation (the thread count climbing while the queue stays long, completions low and the CPU under {StarvationRule.Default.MaxCpuPercent:0} %, read from the runtime's counters once a second), then names the blocking code at that moment.")
        {
            processId, name, timeout, format, json, outputFile, top, app,
        };
        watch.Validators.Add(r => RequireOneTarget(r, processId, name, null));
        watch.Validators.Add(r =>
        {
            if (AsksForSpeedscope(r, format))
            {
                r.AddError("--format speedscope is for stacks; watch writes text or json.");
            }
        });
        watch.SetAction(parse =>
        {
            var pid = Target(parse, processId, name);
            TargetProcess.EnsureDiagnosable(pid);
            var patience = ValueOr(parse, timeout, DefaultWatchTimeout);

            // The seconds as they are read go to standard error, whatever the report's format: progress, not the answer. The
            // first line once the session is on: from then on the process is watched.
            var result = StarvationWatch.Run(pid, patience, (second, verdict) => TextReport.WriteSecond(error, second, verdict), options: Options(parse, app),
                onWatching: () => TextReport.WriteWatchStart(error, pid, StarvationRule.Default, patience));
            var sites = result.Snapshot?.BlockedPoolSites.Take(parse.GetValue(top)).ToList() ?? [];
            Write(parse, format, json, outputFile, output, report => TextReport.WriteWatch(report, result, sites, patience), result with { Snapshot = result.Snapshot is { } s ? s with { Groups = [.. sites.SelectMany(site => site.Groups)] } : null }, null);
            return result.Starved ? 0 : NoStarvation;
        });

        return new RootCommand("Names the code that blocks a .NET process's thread pool, down to the line: grouped stacks, wait analysis, and a watch that waits for starvation.") { stacks, waits, watch };
    }

    // An assembly's file name names the assembly: Contoso.Orders.dll is Contoso.Orders.
    private static DiagnosisOptions Options(ParseResult parse, Option<string[]> app) =>
        DiagnosisOptions.Default with { AppPrefixes = [.. (parse.GetValue(app) ?? []).Select(AssemblyOrNamespace)] };

    private static string AssemblyOrNamespace(string value) =>
        value.EndsWith(".dll", StringComparison.OrdinalIgnoreCase) || value.EndsWith(".exe", StringComparison.OrdinalIgnoreCase) ? value[..^4] : value;

    private static void Write<T>(ParseResult parse, Option<ReportFormat> format, Option<bool> json, Option<FileInfo?> outputFile, TextWriter console,
        Action<TextWriter> text, T model, Action<Stream>? speedscope)
    {
        var chosen = parse.GetValue(json) ? ReportFormat.Json : parse.GetValue(format);
        var path = parse.GetValue(outputFile);
        using var stream = path is null ? null : CreateReport(path);
        using var fileWriter = stream is null ? null : new StreamWriter(stream);
        var writer = fileWriter ?? console;
        switch (chosen)
        {
            case ReportFormat.Json:
                writer.WriteLine(JsonSerializer.Serialize(model, Json));
                break;
            case ReportFormat.Speedscope when stream is not null:
                speedscope!(stream);
                break;
            case ReportFormat.Speedscope:
                using (var buffer = new MemoryStream())
                {
                    speedscope!(buffer);
                    writer.WriteLine(System.Text.Encoding.UTF8.GetString(buffer.ToArray()));
                }

                break;
            default:
                text(writer);
                break;
        }

        if (path is not null)
        {
            console.WriteLine($"Wrote {path.FullName}");
        }
    }

    private static FileStream CreateReport(FileInfo path)
    {
        try
        {
            return File.Create(path.FullName);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new DiagnosisException(DiagnosisFailure.ReportNotWritten, $"The report could not be written to {path.FullName}: {e.Message}", e);
        }
    }

    // The validators of a command read what was given, never a value: one that did not parse has its own error already,
    // and reading it would throw instead of answering the usage.
    private static bool AsksForSpeedscope(CommandResult result, Option<ReportFormat> format) =>
        result.GetResult(format)?.Tokens.Any(t => string.Equals(t.Value, nameof(ReportFormat.Speedscope), StringComparison.OrdinalIgnoreCase)) == true;

    private static void RequireOneTarget(CommandResult result, Option<int?> processId, Option<string?> name, Argument<FileInfo?>? file)
    {
        var given = new[] { result.GetResult(processId) is not null, result.GetResult(name) is not null, file is not null && result.GetResult(file)?.Tokens.Count > 0 }
            .Count(g => g);
        if (given != 1)
        {
            var choices = file is null ? "-p PID or -n NAME" : "a .nettrace file, -p PID or -n NAME";
            result.AddError($"Pass exactly one of {choices}.");
        }
    }

    private static int Target(ParseResult parse, Option<int?> processId, Option<string?> name) =>
        parse.GetValue(processId) ?? TargetProcess.FindByName(parse.GetValue(name)!);

    // A default given here rather than as the option's DefaultValueFactory, which the help prints as TimeSpan writes it (00:00:03).
    private static TimeSpan ValueOr(ParseResult parse, Option<TimeSpan> option, string fallback) =>
        parse.GetResult(option) is not null ? parse.GetValue(option)
        : Durations.TryParse(fallback, out var duration, allowZero: false) ? duration
        : throw new InvalidOperationException($"The default {fallback} is not a duration.");

    // Said in the option's own words, not as the type System.CommandLine expected (Nullable`1[System.Int32]).
    private static int? ParseProcessId(ArgumentResult result)
    {
        var text = result.Tokens.Count == 1 ? result.Tokens[0].Value : "";
        if (int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var id) && id > 0)
        {
            return id;
        }

        result.AddError($"--process-id must be a process id, a whole number such as 1234 (ps or dotnet-trace ps lists them), not '{text}'.");
        return null;
    }

    private static ReportFormat ParseFormat(ArgumentResult result)
    {
        var text = result.Tokens.Count == 1 ? result.Tokens[0].Value : "";
        if (Enum.TryParse<ReportFormat>(text, ignoreCase: true, out var format) && Enum.IsDefined(format) && !char.IsDigit(text[0]))
        {
            return format;
        }

        result.AddError($"--format must be text, json or speedscope, not '{text}'.");
        return ReportFormat.Text;
    }

    private static TimeSpan ParseDuration(ArgumentResult result, bool allowZero)
    {
        var text = result.Tokens.Count == 1 ? result.Tokens[0].Value : "";
        if (Durations.TryParse(text, out var duration, allowZero))
        {
            return duration;
        }

        result.AddError(Durations.NotADuration(text, allowZero));
        return TimeSpan.Zero;
    }
}

/// <summary>How a report is written.</summary>
internal enum ReportFormat
{
    Text,
    Json,
    Speedscope,
}
