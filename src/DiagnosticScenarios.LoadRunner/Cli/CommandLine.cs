using System.Globalization;
using System.Text.Json;
using DiagnosticScenarios.LoadRunner.Compare;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary>The <c>run</c> and <c>compare</c> commands.</summary>
public static class CommandLine
{
    public const string Usage = """
        Usage:
          DiagnosticScenarios.LoadRunner run --url URL [-c 125] [-d 10s | -n N] [--rate R] [--timeout 30s] [--no-drain] [--json]
          DiagnosticScenarios.LoadRunner compare [--family mock|sql] [--scenarios a,b,...] [-c 125] [-d 10s] [--cpus 2]
                                                 [--min-threads N] [--delay-ms N] [--timeout 30s] [--env KEY=VALUE]...
                                                 [--out DIR] [--app PATH_TO_DiagnosticScenarios_EXECUTABLE_OR_DLL]

          run      closed loop: -c clients send back to back for -d (or -n requests in total);
                   open loop: --rate requests/s at fixed times, latency counted from the intended send time.
          compare  each scenario on a fresh server process (cold pool, DOTNET_PROCESSOR_COUNT=--cpus), one warm-up
                   request, then the load; writes compare.md, compare.json and compare.svg into --out
                   (default ./results/<timestamp>). --min-threads applies the SetMinThreads workaround at start.
        Durations: 500ms, 10s, 2m (a plain number is seconds).
        """;

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

        try
        {
            return args.FirstOrDefault() switch
            {
                "run" => await RunLoadAsync(new Arguments(args[1..]), output, error, cancel.Token),
                "compare" => await CompareAsync(new Arguments(args[1..]), args, output, error, cancel.Token),
                "-h" or "--help" or "help" => Help(output),
                _ => UsageError(error, args.Length == 0 ? "No command." : $"Unknown command '{args[0]}'."),
            };
        }
        catch (UsageException e)
        {
            return UsageError(error, e.Message);
        }
        catch (OperationCanceledException) when (cancel.IsCancellationRequested)
        {
            await error.WriteLineAsync("Cancelled.");
            return 130;
        }
    }

    private static async Task<int> RunLoadAsync(Arguments arguments, TextWriter output, TextWriter error, CancellationToken cancellationToken)
    {
        var url = arguments.Value("--url") ?? throw new UsageException("run needs --url.");
        if (!Uri.TryCreate(url, UriKind.Absolute, out var uri))
        {
            throw new UsageException($"Not an absolute URL: {url}");
        }

        var options = new LoadOptions
        {
            Url = uri,
            Connections = arguments.Int("-c", "--connections") ?? 125,
            Duration = arguments.Duration("-d", "--duration"),
            Requests = arguments.Int("-n", "--requests"),
            Rate = arguments.Double("--rate"),
            Timeout = arguments.Duration("--timeout") ?? TimeSpan.FromSeconds(30),
            DrainInFlight = !arguments.Flag("--no-drain"),
        };
        var json = arguments.Flag("--json");
        arguments.ThrowIfUnused();

        // A progress line only for runs long enough to wonder about, on stderr so --json stays clean.
        var showProgress = options.Requests is null && (options.Duration ?? TimeSpan.FromSeconds(10)) > TimeSpan.FromSeconds(3) || options.Requests > 2000;
        var progress = showProgress ? new Progress<LoadProgress>(p => error.Write(string.Create(CultureInfo.InvariantCulture,
            $"\r{p.Elapsed.TotalSeconds,5:0}s  sent {p.Sent}  answered {p.Completed}  failed {p.Failures}  in flight {p.InFlight}  {p.RequestsPerSecondLastInterval:0.0} req/s   "))) : null;

        var report = await LoadGenerator.RunAsync(options, progress, cancellationToken);
        if (showProgress)
        {
            await error.WriteLineAsync();
        }

        await output.WriteAsync(json ? JsonSerializer.Serialize(report, CompareReportWriter.JsonOptions) + Environment.NewLine : CompareReportWriter.Summary(report));
        return 0;
    }

    private static async Task<int> CompareAsync(Arguments arguments, string[] raw, TextWriter output, TextWriter error, CancellationToken cancellationToken)
    {
        var family = ScenarioFamily.Find(arguments.Value("--family") ?? "mock");
        var scenarios = (arguments.Value("--scenarios") ?? string.Empty).Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        foreach (var scenario in scenarios)
        {
            _ = family[scenario];
        }

        var environment = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var pair in arguments.Values("--env"))
        {
            var equals = pair.IndexOf('=', StringComparison.Ordinal);
            if (equals <= 0)
            {
                throw new UsageException($"--env takes KEY=VALUE, not '{pair}'.");
            }

            environment[pair[..equals]] = pair[(equals + 1)..];
        }

        var app = arguments.Value("--app") ?? AppLocator.FindDefault()
            ?? throw new UsageException("Could not find the DiagnosticScenarios app; build it (dotnet build src/DiagnosticScenarios -c Release) or pass --app.");
        var options = new ComparisonOptions
        {
            AppPath = app,
            Family = family,
            Scenarios = scenarios,
            Connections = arguments.Int("-c", "--connections") ?? 125,
            Duration = arguments.Duration("-d", "--duration") ?? TimeSpan.FromSeconds(10),
            Timeout = arguments.Duration("--timeout") ?? TimeSpan.FromSeconds(30),
            ProcessorCount = arguments.Int("--cpus") ?? 2,
            MinWorkerThreads = arguments.Int("--min-threads"),
            DelayMs = arguments.Int("--delay-ms"),
            Environment = environment,
        };
        var outDirectory = arguments.Value("--out") ?? Path.Combine("results", DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture));
        arguments.ThrowIfUnused();

        await error.WriteLineAsync($"app: {app}");
        var commandLine = "DiagnosticScenarios.LoadRunner " + string.Join(' ', raw.Select(a => a.Contains(' ', StringComparison.Ordinal) ? $"\"{a}\"" : a));
        var result = await CompareRunner.RunAsync(options, commandLine, error, cancellationToken);
        await output.WriteLineAsync();
        await output.WriteAsync(CompareReportWriter.Table(result));
        foreach (var file in await CompareReportWriter.WriteAsync(result, outDirectory, cancellationToken))
        {
            await output.WriteLineAsync($"wrote {file}");
        }

        return 0;
    }

    private static int Help(TextWriter output)
    {
        output.WriteLine(Usage);
        return 0;
    }

    private static int UsageError(TextWriter error, string message)
    {
        error.WriteLine(message);
        error.WriteLine(Usage);
        return 2;
    }
}
