using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary><c>compare</c>: each scenario of a family on a fresh server, loaded the same way; writes the table and its files.</summary>
/// <param name="commandLine">The arguments as given, for the report to say how it was made.</param>
internal sealed class CompareCommand(TextWriter output, TextWriter error, string commandLine)
{
    private readonly Option<string> _family = new("--family") { Description = "A family of the app's catalogue (GET /api/scenarios): mock, sql or blocking.", DefaultValueFactory = _ => ComparisonOptions.DefaultFamily };
    private readonly Option<string[]> _scenarios = new("--scenarios")
    {
        Description = "Comma-separated scenario names; default every BAD and GOOD scenario of the family.",
        CustomParser = r => [.. r.Tokens.SelectMany(t => t.Value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))],
    };
    private readonly Option<int> _connections = SharedOptions.Connections();
    private readonly Option<TimeSpan?> _duration = new("--duration", "-d") { Description = $"How long to load each scenario ({Durations.Help}).", CustomParser = SharedOptions.PositiveDuration, DefaultValueFactory = _ => LoadOptions.DefaultDuration };
    private readonly Option<int> _cpus = new("--cpus") { Description = "DOTNET_PROCESSOR_COUNT of every server.", DefaultValueFactory = _ => ServerOptions.DefaultProcessorCount, CustomParser = r => OptionValues.WholeNumber(r, 1, 1024) ?? 0 };
    private readonly Option<int?> _minThreads = new("--min-threads")
    {
        Description = "Raise the pool's minimum worker threads at start, as SetMinThreads would, through the environment variable DOTNET_ThreadPool_ForceMinWorkerThreads.",
        CustomParser = r => OptionValues.WholeNumber(r, 1, short.MaxValue),
    };
    private readonly Option<int?> _delayMs = new("--delay-ms") { Description = "The query delay; default the family's, or each scenario's own (the blocking family's).", CustomParser = r => OptionValues.WholeNumber(r, 0, ScenarioLimits.MaxDelayMs) };
    private readonly Option<TimeSpan> _timeout = SharedOptions.Timeout();
    private readonly Option<TimeSpan?> _thinkTime = SharedOptions.ThinkTime();
    private readonly Option<TimeSpan?> _drain = new("--drain")
    {
        Description = $"When sending stops, cut off the requests still in flight after this long ({Durations.Help}) and count them unfinished; default: each until its timeout.",
        CustomParser = SharedOptions.PositiveDuration,
    };
    private readonly Option<string[]> _environment = new("--env") { Description = "KEY=VALUE for every server; repeat for more.", CustomParser = EnvironmentPairs };
    private readonly Option<string?> _out = new("--out") { Description = "Where to write compare.md, compare.json and compare.svg (default ./results/<timestamp>)." };
    private readonly Option<bool> _diagnose = new("--diagnose")
    {
        Description = "Also record each server under its load from outside (a wait trace over the load, a stack snapshot half-way) and report where its pool threads block.",
    };
    private readonly Option<TimeSpan?> _snapshotAfter = new("--snapshot-after")
    {
        Description = $"With --diagnose, when to take the stack snapshot ({Durations.Help}); default half-way through the load.",
        CustomParser = SharedOptions.PositiveDuration,
    };
    private readonly Option<string?> _app = new("--app") { Description = "The DiagnosticScenarios apphost or dll (default: the most recently built one in this repository)." };

    public Command Create()
    {
        var command = new Command("compare", "Each scenario on a fresh server process (cold pool), one warm-up request, then the load; writes compare.md, compare.json and compare.svg.")
        {
            _family, _scenarios, _connections, _duration, _cpus, _minThreads, _delayMs, _thinkTime, _timeout, _drain, _environment, _diagnose, _snapshotAfter, _out, _app,
        };
        command.SetAction(RunAsync);
        return command;
    }

    private async Task<int> RunAsync(ParseResult parse, CancellationToken cancellationToken)
    {
        var appPath = AppPath(parse);
        var wanted = parse.GetValue(_out) ?? Path.Combine("results", DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture));
        var existed = Directory.Exists(wanted);
        var directory = ReportFiles.Folder(wanted);

        await error.WriteLineAsync($"app: {appPath}");
        ComparisonResult result;
        try
        {
            result = await CompareRunner.RunAsync(Options(parse, appPath), $"{CommandLine.Name} {commandLine}", error, cancellationToken);
        }
        catch when (!existed && !Directory.EnumerateFileSystemEntries(directory).Any())
        {
            // A comparison that measured nothing leaves no empty folder behind.
            Directory.Delete(directory);
            throw;
        }

        await output.WriteLineAsync();
        await output.WriteAsync(CompareTable.Render(result));
        return await ReportFiles.WriteAsync(result, directory, output, error, cancellationToken);
    }

    private string AppPath(ParseResult parse)
    {
        var appPath = parse.GetValue(_app) ?? AppLocator.FindDefault()
            ?? throw new UsageException("Could not find the DiagnosticScenarios app; build it (dotnet build src/DiagnosticScenarios -c Release) or pass --app.");
        return File.Exists(appPath) ? appPath : throw new UsageException($"--app: no file at '{appPath}'.");
    }

    private ComparisonOptions Options(ParseResult parse, string appPath) => new()
    {
        AppPath = appPath,
        Family = parse.GetRequiredValue(_family),
        Scenarios = parse.GetValue(_scenarios) ?? [],
        Connections = parse.GetValue(_connections),
        Duration = parse.GetValue(_duration)!.Value,
        Timeout = parse.GetValue(_timeout),
        Drain = parse.GetValue(_drain),
        ProcessorCount = parse.GetValue(_cpus),
        MinWorkerThreads = parse.GetValue(_minThreads),
        DelayMs = parse.GetValue(_delayMs),
        ThinkTime = parse.GetValue(_thinkTime),
        Diagnose = parse.GetValue(_diagnose),
        SnapshotAfter = parse.GetValue(_snapshotAfter),
        Environment = (parse.GetValue(_environment) ?? []).Select(p => p.Split('=', 2)).ToDictionary(p => p[0], p => p[1], StringComparer.Ordinal),
    };

    private static string[] EnvironmentPairs(ArgumentResult result)
    {
        foreach (var token in result.Tokens.Where(t => t.Value.IndexOf('=', StringComparison.Ordinal) <= 0))
        {
            result.AddError($"--env takes KEY=VALUE, not '{token.Value}'.");
        }

        foreach (var twice in result.Tokens.Select(t => t.Value.Split('=', 2)[0]).GroupBy(key => key, StringComparer.Ordinal).Where(g => g.Count() > 1))
        {
            result.AddError($"--env sets {twice.Key} more than once.");
        }

        return [.. result.Tokens.Select(t => t.Value)];
    }
}
