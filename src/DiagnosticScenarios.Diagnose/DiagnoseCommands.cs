using System.CommandLine;
using System.CommandLine.Parsing;
using System.Text.Json;
using System.Text.Json.Serialization;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Diagnosis;

namespace DiagnosticScenarios.Diagnose;

/// <summary>The verbs: <c>stacks</c> (a grouped snapshot of a process) and <c>waits</c> (the wait analysis, live or from a .nettrace).</summary>
public static class DiagnoseCommands
{
    public const int Failed = 1;
    public const int BadArguments = 2;

    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { WriteIndented = true, DefaultIgnoreCondition = JsonIgnoreCondition.Never };

    public static int Run(string[] args, TextWriter output, TextWriter error)
    {
        var root = Build(output);
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

    private static RootCommand Build(TextWriter output)
    {
        var processId = new Option<int?>("--process-id", "-p") { Description = "The id of the .NET process." };
        var name = new Option<string?>("--name", "-n") { Description = "The name of the .NET process, e.g. DiagnosticScenarios." };
        var json = new Option<bool>("--json") { Description = "JSON for scripts instead of text." };
        var top = new Option<int>("--top") { Description = "How many blocking sites (stacks) or wait sites to print.", DefaultValueFactory = _ => 5 };
        var allThreads = new Option<bool>("--all-threads") { Description = "Every thread's group, not only the thread pool's." };
        var duration = new Option<TimeSpan>("--duration")
        {
            Description = $"How long to record waits ({Durations.Help}).",
            DefaultValueFactory = _ => TimeSpan.FromSeconds(10),
            CustomParser = ParseDuration,
        };
        var file = new Argument<FileInfo?>("trace") { Description = "A .nettrace recorded with --clrevents waithandle --clreventlevel verbose.", Arity = ArgumentArity.ZeroOrOne };

        top.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<int>() < 1)
            {
                r.AddError("--top must be 1 or more.");
            }
        });

        var stacks = new Command("stacks", "Groups every managed thread of a process by identical stack and names the call each group is parked in and the app frame that made it.")
        {
            processId, name, json, top, allThreads,
        };
        stacks.Validators.Add(r => RequireOneTarget(r, processId, name, null));
        stacks.SetAction(parse =>
        {
            var pid = Target(parse, processId, name);
            var snapshot = StackSnapshots.Capture(pid);
            var allSites = snapshot.BlockedPoolSites;
            var sites = allSites.Take(parse.GetValue(top)).ToList();

            // The shown sites' stacks, then the largest of the rest (idle or running workers, and other threads on request),
            // so a process with nothing parked still shows what its pool is doing.
            var siteGroups = sites.SelectMany(s => s.Groups).ToList();
            var others = snapshot.Groups
                .Where(g => (parse.GetValue(allThreads) || g.PoolThreads) && !allSites.Any(s => s.Groups.Contains(g)))
                .Take(parse.GetValue(top));
            var shown = snapshot with { Groups = [.. siteGroups, .. others] };
            if (parse.GetValue(json))
            {
                output.WriteLine(JsonSerializer.Serialize(shown, Json));
            }
            else
            {
                TextReport.WriteStacks(output, snapshot, sites, shown.Groups);
            }

            return 0;
        });

        var waits = new Command("waits", "The blocking waits (WaitHandleWait events, .NET 9+) of pool threads by call site, from a live process or a .nettrace file.")
        {
            file, processId, name, duration, json, top,
        };
        waits.Validators.Add(r => RequireOneTarget(r, processId, name, file));
        waits.SetAction(parse =>
        {
            var trace = parse.GetValue(file);
            var analysis = trace is not null
                ? WaitAnalyzer.Analyze(trace.FullName)
                : WaitAnalyzer.Capture(Target(parse, processId, name), parse.GetValue(duration));
            var sites = analysis.Sites.Take(parse.GetValue(top)).ToList();
            if (parse.GetValue(json))
            {
                output.WriteLine(JsonSerializer.Serialize(analysis with { Sites = sites }, Json));
            }
            else
            {
                TextReport.WriteWaits(output, analysis, sites, trace?.FullName);
            }

            return 0;
        });

        return new RootCommand("Names the code that blocks a .NET process's thread pool: grouped stacks and wait analysis.") { stacks, waits };
    }

    private static void RequireOneTarget(CommandResult result, Option<int?> processId, Option<string?> name, Argument<FileInfo?>? file)
    {
        var given = new[] { result.GetResult(processId) is not null, result.GetResult(name) is not null, file is not null && result.GetValue(file) is not null }
            .Count(g => g);
        if (given != 1)
        {
            var choices = file is null ? "-p PID or -n NAME" : "a .nettrace file, -p PID or -n NAME";
            result.AddError($"Pass exactly one of {choices}.");
        }
    }

    private static int Target(ParseResult parse, Option<int?> processId, Option<string?> name) =>
        parse.GetValue(processId) ?? TargetProcess.FindByName(parse.GetValue(name)!);

    private static TimeSpan ParseDuration(ArgumentResult result)
    {
        var text = result.Tokens.Count == 1 ? result.Tokens[0].Value : "";
        if (Durations.TryParse(text, out var duration))
        {
            return duration;
        }

        result.AddError(Durations.NotADuration(text));
        return TimeSpan.Zero;
    }
}
