using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;

namespace DotnetBlocking;

/// <summary>The options the verbs share: the process (<c>-p</c>, <c>-n</c>, <c>--diagnostic-port</c>), the report (<c>--format</c>, <c>--json</c>, <c>-o</c>), <c>--top</c>, <c>--app</c> and <c>--symbols</c>.</summary>
internal sealed class SharedOptions
{
    private const string DefaultConnectTimeout = "10s";

    public SharedOptions()
    {
        Name.Validators.Add(r =>
        {
            if (string.IsNullOrWhiteSpace(r.GetValueOrDefault<string?>()))
            {
                r.AddError("--name needs a process name, e.g. DiagnosticScenarios.");
            }
        });
        Symbols.Validators.Add(r =>
        {
            foreach (var folder in (r.GetValueOrDefault<DirectoryInfo[]>() ?? []).Where(f => !f.Exists))
            {
                r.AddError($"--symbols names no folder: {folder.FullName} does not exist.");
            }
        });
        App.Validators.Add(r =>
        {
            if ((r.GetValueOrDefault<string[]>() ?? []).Any(string.IsNullOrWhiteSpace))
            {
                r.AddError("--app needs a namespace or an assembly name, e.g. --app Contoso.Orders.");
            }
        });
    }

    public Option<int?> ProcessId { get; } = new("--process-id", "-p")
    {
        Description = "The process id to diagnose.",
        HelpName = "pid",
        CustomParser = ParseProcessId,
    };

    public Option<string?> Name { get; } = new("--name", "-n") { Description = "The name of the process to diagnose, e.g. DiagnosticScenarios." };

    public Option<string?> DiagnosticPort { get; } = new("--diagnostic-port")
    {
        Description = "Listen on this Unix socket, which this tool creates, for the app started with DOTNET_DiagnosticPorts=PATH,nosuspend to connect to (a sidecar sharing only the socket's folder with the app); the app's files are read at the paths the trace gives, or in --symbols.",
        HelpName = "path",
    };

    public Option<TimeSpan> ConnectTimeout { get; } = Duration("--connect-timeout",
        $"How long --diagnostic-port waits for the app's runtime to connect ({Durations.Help}); {DefaultConnectTimeout} by default.", allowZero: false);

    public Option<ReportFormat> Format { get; } = new("--format")
    {
        Description = "text (the default), json for scripts, or speedscope (stacks only: a file https://www.speedscope.app opens).",
        HelpName = "text|json|speedscope",
        CustomParser = ParseFormat,
    };

    public Option<bool> Json { get; } = new("--json") { Description = "The same as --format json." };

    // Checked as it is read, before the capture, so that no one waits for a session whose report has nowhere to go.
    public Option<FileInfo?> Output { get; } = new("--output", "-o")
    {
        Description = "Write the report to this file instead of the console.",
        CustomParser = ParseOutput,
    };

    public Option<int> Top { get; } = new("--top")
    {
        Description = "How many blocking sites (stacks) or wait sites to show.",
        DefaultValueFactory = _ => 5,
        CustomParser = r => OptionValues.WholeNumber(r, 1, int.MaxValue) ?? 0,
    };

    public Option<string[]> App { get; } = new("--app")
    {
        Description = "A namespace or assembly name whose frames are the app's (repeatable). Without it, a frame is the app's when its module is not the runtime, the shared framework or a package.",
        AllowMultipleArgumentsPerToken = false,
    };

    public Option<DirectoryInfo[]> Symbols { get; } = new("--symbols")
    {
        Description = "A folder holding the app's modules and their PDBs, or its PDBs alone (repeatable), read instead of the files at the paths the process ran them from: for a trace, a dump or a sidecar whose app's files are elsewhere.",
        HelpName = "folder",
        AllowMultipleArgumentsPerToken = false,
    };

    /// <summary>Refuses a command line that names no process (nor, with <paramref name="file"/>, a file), or more than one.</summary>
    /// <param name="fileKind">What the file may be, as the error names it.</param>
    public void RequireOneTarget(CommandResult result, Argument<FileInfo?>? file = null, string fileKind = "a .nettrace file")
    {
        var given = new[]
            {
                result.GetResult(ProcessId) is not null, result.GetResult(Name) is not null, result.GetResult(DiagnosticPort) is not null,
                file is not null && result.GetResult(file)?.Tokens.Count > 0,
            }
            .Count(g => g);
        if (given != 1)
        {
            var choices = file is null ? "-p PID, -n NAME or --diagnostic-port PATH" : $"{fileKind}, -p PID, -n NAME or --diagnostic-port PATH";
            result.AddError($"Pass exactly one of {choices}.");
        }
    }

    /// <summary>Refuses <c>--format speedscope</c> for a verb whose report is not a set of stacks.</summary>
    public void RefuseSpeedscope(Command verb) => verb.Validators.Add(result =>
    {
        // What was given, never the value: one that did not parse has its own error already, and reading it would throw
        // instead of answering the usage.
        if (result.GetResult(Format)?.Tokens.Any(t => string.Equals(t.Value, nameof(ReportFormat.Speedscope), StringComparison.OrdinalIgnoreCase)) == true)
        {
            result.AddError($"--format speedscope is for stacks; {verb.Name} writes text or json.");
        }
    });

    /// <summary>The process id given, the one process of the name given, or the runtime that connects to the port given.</summary>
    public DiagnosticTarget Target(ParseResult parse) =>
        parse.GetValue(DiagnosticPort) is { } port ? DiagnosticTarget.Listen(port, ValueOr(parse, ConnectTimeout, DefaultConnectTimeout))
        : parse.GetValue(ProcessId) ?? TargetProcess.FindByName(parse.GetValue(Name)!);

    // An assembly's file name names the assembly: Contoso.Orders.dll is Contoso.Orders.
    public DiagnosisOptions Diagnosis(ParseResult parse) =>
        DiagnosisOptions.Default with
        {
            AppPrefixes = [.. (parse.GetValue(App) ?? []).Select(AssemblyOrNamespace)],
            SymbolFolders = [.. (parse.GetValue(Symbols) ?? []).Select(folder => folder.FullName)],
        };

    /// <summary>The report as <c>--format</c>, <c>--json</c> and <c>--output</c> ask.</summary>
    public ReportWriter Report(ParseResult parse, TextWriter console) =>
        new(parse.GetValue(Json) ? ReportFormat.Json : parse.GetValue(Format), parse.GetValue(Output), console);

    /// <summary>A duration option whose default is given by the verb, as its help says it (<c>3s</c>), not as TimeSpan writes it.</summary>
    public static Option<TimeSpan> Duration(string name, string description, bool allowZero) => new(name)
    {
        Description = description,
        HelpName = "duration",
        CustomParser = r => OptionValues.Duration(r, allowZero) ?? default,
    };

    /// <summary>The duration given, or <paramref name="fallback"/>, the default its help states.</summary>
    public static TimeSpan ValueOr(ParseResult parse, Option<TimeSpan> option, string fallback) =>
        parse.GetResult(option) is not null ? parse.GetValue(option)
        : Durations.TryParse(fallback, out var duration, allowZero: false) ? duration
        : throw new InvalidOperationException($"The default {fallback} is not a duration.");

    private static string AssemblyOrNamespace(string value) =>
        value.EndsWith(".dll", StringComparison.OrdinalIgnoreCase) || value.EndsWith(".exe", StringComparison.OrdinalIgnoreCase) ? value[..^4] : value;

    private static FileInfo? ParseOutput(ArgumentResult result)
    {
        var text = OptionValues.Text(result);
        FileInfo target;
        try
        {
            target = new FileInfo(text);
        }
        catch (Exception e) when (e is ArgumentException or PathTooLongException)
        {
            result.AddError($"--output needs a file's path, not '{text}'.");
            return null;
        }

        if (Directory.Exists(target.FullName))
        {
            result.AddError($"--output names a folder, {target.FullName}: give a file's path.");
        }
        else if (target.Directory is { Exists: false } folder)
        {
            result.AddError($"--output's folder {folder.FullName} does not exist: create it, or give a path in a folder that does.");
        }

        return target;
    }

    // Said in the option's own words, not as the type System.CommandLine expected (Nullable`1[System.Int32]).
    private static int? ParseProcessId(ArgumentResult result)
    {
        var text = OptionValues.Text(result);
        if (int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var id) && id > 0)
        {
            return id;
        }

        result.AddError($"--process-id must be a process id, a whole number such as 1234 (ps or dotnet-trace ps lists them), not '{text}'.");
        return null;
    }

    private static ReportFormat ParseFormat(ArgumentResult result)
    {
        var text = OptionValues.Text(result);
        if (Enum.TryParse<ReportFormat>(text, ignoreCase: true, out var format) && Enum.IsDefined(format) && !char.IsDigit(text[0]))
        {
            return format;
        }

        result.AddError($"--format must be text, json or speedscope, not '{text}'.");
        return ReportFormat.Text;
    }
}
