using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Parsing;
using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary>The <c>run</c>, <c>compare</c> and <c>render</c> commands. A wrong command line answers the errors and the usage on stderr, exit code 2.</summary>
public static class CommandLine
{
    public const int UsageExitCode = 2;

    /// <summary>
    /// A comparison that could not be measured: a server that would not start, a scenario that failed its warm-up, a server
    /// <c>--diagnose</c> could not open a session on.
    /// </summary>
    public const int FailureExitCode = 1;
    private const string Name = "DiagnosticScenarios.LoadRunner";

    public static async Task<int> RunAsync(string[] args, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        using var cancel = new CancellationTokenSource();
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            cancel.Cancel();
        };

        var root = Commands(output, error, args);
        var parsed = root.Parse(args);
        if (parsed.Errors.Count > 0)
        {
            return UsageError(error, parsed, parsed.Errors.Select(e => e.Message));
        }

        try
        {
            return await parsed.InvokeAsync(new InvocationConfiguration { Output = output, Error = error, EnableDefaultExceptionHandler = false }, cancel.Token);
        }
        catch (UsageException e)
        {
            return UsageError(error, parsed, [e.Message]);
        }
        catch (UnknownScenarioException e)
        {
            return UsageError(error, parsed, [e.Message]);
        }
        catch (Exception e) when (e is ServerStartException or MeasurementException or DiagnosisException)
        {
            await error.WriteLineAsync(e.Message);
            return FailureExitCode;
        }
        catch (OperationCanceledException) when (cancel.IsCancellationRequested)
        {
            await error.WriteLineAsync("Cancelled.");
            return 130;
        }
    }

    private static Command Commands(TextWriter output, TextWriter error, string[] args)
    {
        var root = new Command(Name, "Loads DiagnosticScenarios from a process of its own, and compares its scenarios on fresh servers.")
        {
            new HelpOption { Recursive = true },
            RunCommand(output, error),
            CompareCommand(output, error, string.Join(' ', args.Select(a => a.Contains(' ', StringComparison.Ordinal) ? $"\"{a}\"" : a))),
            RenderCommand(output, error),
        };
        root.SetAction(parse => UsageError(error, parse, ["No command."]));
        return root;
    }

    private static Command RunCommand(TextWriter output, TextWriter error)
    {
        var url = new Option<Uri>("--url") { Description = "The absolute URL to load.", Required = true, CustomParser = AbsoluteUrl };
        var connections = Connections();
        var duration = new Option<TimeSpan?>("--duration", "-d") { Description = $"How long to load ({Durations.Help}); default {LoadOptions.DefaultDuration.TotalSeconds:0}s unless -n is given.", CustomParser = PositiveDuration };
        var requests = new Option<int?>("--requests", "-n") { Description = "Requests in total, instead of a duration.", CustomParser = r => Whole(r, 1, int.MaxValue) };
        var rate = new Option<double?>("--rate") { Description = "Open loop: requests per second at fixed times, latency counted from the intended send.", CustomParser = PositiveNumber };
        var timeout = Timeout();
        var thinkTime = ThinkTime();
        var noDrain = new Option<bool>("--no-drain") { Description = "Do not wait for the requests in flight when the time is up." };
        var method = new Option<HttpMethod>("--method", "-m") { Description = "The request method.", CustomParser = Method, DefaultValueFactory = _ => HttpMethod.Get };
        var bodyBytes = new Option<int?>("--body-bytes") { Description = "Each request carries a body of this many bytes.", CustomParser = r => Whole(r, 0, 64 * 1024 * 1024) };
        var uploadOver = new Option<TimeSpan?>("--upload-over") { Description = $"Send each body in pieces spread over this long, a slow client's upload ({Durations.Help}); needs --body-bytes.", CustomParser = PositiveDuration };
        var json = new Option<bool>("--json") { Description = "Write the report as JSON." };

        var command = new Command("run", "Closed loop: -c clients send back to back for -d (or -n requests in total); open loop with --rate.")
        {
            url, connections, duration, requests, rate, thinkTime, timeout, noDrain, method, bodyBytes, uploadOver, json,
        };
        command.Validators.Add(parse =>
        {
            // Whether each was given, not its value: a value that did not parse has its own error already, and reading it
            // here would throw.
            if (parse.GetResult(uploadOver) is not null && parse.GetResult(bodyBytes) is null)
            {
                parse.AddError("--upload-over needs --body-bytes: a slow upload needs a body.");
            }

            if (parse.GetResult(rate) is not null && parse.GetResult(thinkTime) is not null)
            {
                parse.AddError("--think-time is the closed loop's; the open loop (--rate) sends at fixed times.");
            }
        });
        command.SetAction(async (parse, cancellationToken) =>
        {
            var options = new LoadOptions
            {
                Url = parse.GetRequiredValue(url),
                Connections = parse.GetValue(connections),
                Duration = parse.GetValue(duration),
                Requests = parse.GetValue(requests),
                Rate = parse.GetValue(rate),
                ThinkTime = parse.GetValue(thinkTime),
                Timeout = parse.GetValue(timeout),
                Drain = parse.GetValue(noDrain) ? TimeSpan.Zero : null,
                Method = parse.GetValue(method)!,
                BodyBytes = parse.GetValue(bodyBytes),
                UploadOver = parse.GetValue(uploadOver),
            };
            var asJson = parse.GetValue(json);

            // A progress line only for runs long enough to wonder about, on stderr so --json stays clean.
            var showProgress = (options.Requests is null && (options.Duration ?? LoadOptions.DefaultDuration) > TimeSpan.FromSeconds(3)) || options.Requests > 2000;
            var progress = showProgress ? new Progress<LoadProgress>(p => error.Write(string.Create(CultureInfo.InvariantCulture,
                $"\r{p.Elapsed.TotalSeconds,5:0}s  sent {p.Sent}  answered {p.Completed}  failed {p.Failures}  in flight {p.InFlight}  {p.RequestsPerSecondLastInterval:0.0} req/s   "))) : null;

            var report = await LoadGenerator.RunAsync(options, progress, cancellationToken);
            if (showProgress)
            {
                await error.WriteLineAsync();
            }

            await output.WriteAsync(asJson ? JsonSerializer.Serialize(report, CompareJson.Options) + Environment.NewLine : RunSummary.Render(report));
            if (NothingListened(report) is { } nobody)
            {
                await error.WriteLineAsync(nobody);
                return FailureExitCode;
            }

            return 0;
        });
        return command;
    }

    /// <summary>
    /// What to say when no request got an answer and every one failed before it had a chance to (refused, unreachable):
    /// a measurement of nothing, where a run whose requests all timed out has measured a starved server.
    /// </summary>
    public static string? NothingListened(LoadReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        if (report.Completed > 0 || report.Timeouts > 0 || report.Unfinished > 0 || report.Errors.Count == 0)
        {
            return null;
        }

        var errors = string.Join(", ", report.Errors.Select(e => $"{e.Key} × {e.Value}"));
        // Refused or unknown: nothing listens there. Anything else (a TLS handshake that failed, say) reached something.
        var nobody = report.Errors.Keys.All(e => e is nameof(HttpRequestError.ConnectionError) or nameof(HttpRequestError.NameResolutionError));
        return $"Nothing answered at {report.Url}: every request failed before an answer ({errors})."
            + (nobody ? " Is the app listening there? Start it, or give --url the address it listens on." : "");
    }

    private static Command CompareCommand(TextWriter output, TextWriter error, string commandLine)
    {
        var family = new Option<string>("--family") { Description = "A family of the app's catalogue (GET /api/scenarios): mock, sql or blocking.", DefaultValueFactory = _ => ComparisonOptions.DefaultFamily };
        var scenarios = new Option<string[]>("--scenarios")
        {
            Description = "Comma-separated scenario names; default every BAD and GOOD scenario of the family.",
            CustomParser = r => [.. r.Tokens.SelectMany(t => t.Value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))],
        };
        var connections = Connections();
        var duration = new Option<TimeSpan?>("--duration", "-d") { Description = $"How long to load each scenario ({Durations.Help}).", CustomParser = PositiveDuration, DefaultValueFactory = _ => LoadOptions.DefaultDuration };
        var cpus = new Option<int>("--cpus") { Description = "DOTNET_PROCESSOR_COUNT of every server.", DefaultValueFactory = _ => ServerOptions.DefaultProcessorCount, CustomParser = r => Whole(r, 1, 1024) ?? 0 };
        var minThreads = new Option<int?>("--min-threads")
        {
            Description = "Raise the pool's minimum worker threads at start, as SetMinThreads would, through the environment variable DOTNET_ThreadPool_ForceMinWorkerThreads.",
            CustomParser = r => Whole(r, 1, short.MaxValue),
        };
        var delayMs = new Option<int?>("--delay-ms") { Description = "The query delay; default the family's, or each scenario's own (the blocking family's).", CustomParser = r => Whole(r, 0, ScenarioLimits.MaxDelayMs) };
        var timeout = Timeout();
        var thinkTime = ThinkTime();
        var drain = new Option<TimeSpan?>("--drain")
        {
            Description = $"When sending stops, cut off the requests still in flight after this long ({Durations.Help}) and count them unfinished; default: each until its timeout.",
            CustomParser = PositiveDuration,
        };
        var environment = new Option<string[]>("--env") { Description = "KEY=VALUE for every server; repeat for more.", CustomParser = EnvironmentPairs };
        var outDirectory = new Option<string?>("--out") { Description = "Where to write compare.md, compare.json and compare.svg (default ./results/<timestamp>)." };
        var diagnose = new Option<bool>("--diagnose")
        {
            Description = "Also record each server under its load from outside (a wait trace over the load, a stack snapshot half-way) and report where its pool threads block.",
        };
        var snapshotAfter = new Option<TimeSpan?>("--snapshot-after")
        {
            Description = $"With --diagnose, when to take the stack snapshot ({Durations.Help}); default half-way through the load.",
            CustomParser = PositiveDuration,
        };
        var app = new Option<string?>("--app") { Description = "The DiagnosticScenarios apphost or dll (default: the most recently built one in this repository)." };

        var command = new Command("compare", "Each scenario on a fresh server process (cold pool), one warm-up request, then the load; writes compare.md, compare.json and compare.svg.")
        {
            family, scenarios, connections, duration, cpus, minThreads, delayMs, thinkTime, timeout, drain, environment, diagnose, snapshotAfter, outDirectory, app,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var appPath = parse.GetValue(app) ?? AppLocator.FindDefault()
                ?? throw new UsageException("Could not find the DiagnosticScenarios app; build it (dotnet build src/DiagnosticScenarios -c Release) or pass --app.");
            if (!File.Exists(appPath))
            {
                throw new UsageException($"--app: no file at '{appPath}'.");
            }

            var options = new ComparisonOptions
            {
                AppPath = appPath,
                Family = parse.GetRequiredValue(family),
                Scenarios = parse.GetValue(scenarios) ?? [],
                Connections = parse.GetValue(connections),
                Duration = parse.GetValue(duration)!.Value,
                Timeout = parse.GetValue(timeout),
                Drain = parse.GetValue(drain),
                ProcessorCount = parse.GetValue(cpus),
                MinWorkerThreads = parse.GetValue(minThreads),
                DelayMs = parse.GetValue(delayMs),
                ThinkTime = parse.GetValue(thinkTime),
                Diagnose = parse.GetValue(diagnose),
                SnapshotAfter = parse.GetValue(snapshotAfter),
                Environment = (parse.GetValue(environment) ?? []).Select(p => p.Split('=', 2)).ToDictionary(p => p[0], p => p[1], StringComparer.Ordinal),
            };
            var wanted = parse.GetValue(outDirectory) ?? Path.Combine("results", DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture));
            var existed = Directory.Exists(wanted);
            var directory = OutputFolder(wanted);

            await error.WriteLineAsync($"app: {appPath}");
            ComparisonResult result;
            try
            {
                result = await CompareRunner.RunAsync(options, $"{Name} {commandLine}", error, cancellationToken);
            }
            catch when (!existed && !Directory.EnumerateFileSystemEntries(directory).Any())
            {
                // A comparison that measured nothing leaves no empty folder behind.
                Directory.Delete(directory);
                throw;
            }

            await output.WriteLineAsync();
            await output.WriteAsync(CompareTable.Render(result));
            return await WriteFilesAsync(result, directory, output, error, cancellationToken);
        });
        return command;
    }

    /// <summary>The folder for the files, created before any measurement, so that minutes of it never end with nowhere to write.</summary>
    private static string OutputFolder(string directory)
    {
        try
        {
            return Directory.CreateDirectory(directory).FullName;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new UsageException($"--out {directory} cannot be a folder for the files: {e.Message}");
        }
    }

    // The table is on stdout already when this runs: a failure here loses the files, not the measurement.
    private static async Task<int> WriteFilesAsync(ComparisonResult result, string directory, TextWriter output, TextWriter error, CancellationToken cancellationToken)
    {
        try
        {
            foreach (var file in await CompareReportWriter.WriteAsync(result, directory, cancellationToken))
            {
                await output.WriteLineAsync($"wrote {file}");
            }

            return 0;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            await error.WriteLineAsync($"The files could not be written to {directory} ({e.Message}); the table above is the result.");
            return FailureExitCode;
        }
    }

    private static Command RenderCommand(TextWriter output, TextWriter error)
    {
        var from = new Option<FileInfo>("--from") { Description = "A compare.json.", Required = true };
        from.AcceptExistingOnly();
        var outDirectory = new Option<string?>("--out") { Description = "Where to write the files (default: next to --from)." };

        var command = new Command("render", "Writes the table, compare.md and compare.svg again from a compare.json.") { from, outDirectory };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var source = parse.GetRequiredValue(from);
            var directory = parse.GetValue(outDirectory) ?? source.DirectoryName!;
            ComparisonResult? result;
            await using (var json = source.OpenRead())
            {
                try
                {
                    result = await JsonSerializer.DeserializeAsync<ComparisonResult>(json, CompareJson.Options, cancellationToken);
                }
                catch (JsonException e)
                {
                    throw new UsageException($"{source.FullName} is not a compare.json: {e.Message}");
                }
            }

            if (result is null)
            {
                throw new UsageException($"{source.FullName} holds no comparison.");
            }

            await output.WriteAsync(CompareTable.Render(result));
            return await WriteFilesAsync(result, OutputFolder(directory), output, error, cancellationToken);
        });
        return command;
    }

    private static Option<int> Connections() =>
        new("--connections", "-c") { Description = "Concurrent connections.", DefaultValueFactory = _ => LoadOptions.DefaultConnections, CustomParser = r => Whole(r, 1, 100_000) ?? 0 };

    private static Option<TimeSpan?> ThinkTime() =>
        new("--think-time") { Description = $"Closed loop: each client waits a random time up to this between an answer and its next request, as siege -d ({Durations.Help}).", CustomParser = PositiveDuration };

    private static Option<TimeSpan> Timeout() =>
        new("--timeout") { Description = $"A request unanswered after this counts as a timeout ({Durations.Help}).", CustomParser = r => PositiveDuration(r) ?? default, DefaultValueFactory = _ => LoadOptions.DefaultTimeout };

    // Every duration the runner takes is a time to load or to wait, so none may be zero.
    private static TimeSpan? PositiveDuration(ArgumentResult result)
    {
        var text = result.Tokens.Single().Value;
        if (Durations.TryParse(text, out var duration))
        {
            return duration;
        }

        result.AddError(Durations.NotADuration(text));
        return null;
    }

    private static int? Whole(ArgumentResult result, int min, int max)
    {
        var text = result.Tokens.Single().Value;
        if (int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) && value >= min && value <= max)
        {
            return value;
        }

        result.AddError($"{OptionName(result)} takes a whole number from {min} to {max}, not '{text}'.");
        return null;
    }

    private static double? PositiveNumber(ArgumentResult result)
    {
        var text = result.Tokens.Single().Value;
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && value > 0 && double.IsFinite(value))
        {
            return value;
        }

        result.AddError($"{OptionName(result)} takes a positive number, not '{text}'.");
        return null;
    }

    private static HttpMethod? Method(ArgumentResult result)
    {
        var text = result.Tokens.Single().Value;
        if (text.Length > 0 && text.All(char.IsAsciiLetter))
        {
            return new HttpMethod(text.ToUpperInvariant());
        }

        result.AddError($"{OptionName(result)} takes a method such as GET or POST, not '{text}'.");
        return null;
    }

    private static string OptionName(ArgumentResult result) => result.Parent is OptionResult option ? option.Option.Name : result.Argument.Name;

    private static Uri? AbsoluteUrl(ArgumentResult result)
    {
        var text = result.Tokens.Single().Value;
        if (Uri.TryCreate(text, UriKind.Absolute, out var uri) && uri.Scheme is "http" or "https")
        {
            return uri;
        }

        result.AddError($"Not an absolute http(s) URL: '{text}'.");
        return null;
    }

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

    // The errors, then the library's own help of the command that was meant, as its --help would print it.
    private static int UsageError(TextWriter error, ParseResult parsed, IEnumerable<string> messages)
    {
        foreach (var message in messages)
        {
            error.WriteLine(message);
        }

        error.WriteLine();
        var command = parsed.CommandResult.Command;
        var root = parsed.RootCommandResult.Command;
        root.Parse(command == root ? ["--help"] : [command.Name, "--help"]).Invoke(new InvocationConfiguration { Output = error });
        return UsageExitCode;
    }
}

/// <summary>The command line is wrong in a way only the command itself can tell (an app that is not there, a file that is not a report).</summary>
internal sealed class UsageException(string message) : Exception(message);
