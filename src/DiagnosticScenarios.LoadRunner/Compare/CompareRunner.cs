using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>Measures each scenario on a fresh server process (a cold pool), one after the other, loaded from this process.</summary>
public static class CompareRunner
{
    /// <summary>
    /// Reads the family from the first server's catalogue, before any load, then measures each scenario on a server of
    /// its own, the first one on that first server.
    /// </summary>
    /// <exception cref="UnknownScenarioException">The app serves no such family or scenario.</exception>
    public static async Task<ComparisonResult> RunAsync(ComparisonOptions options, string commandLine, TextWriter log, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(log);
        var started = DateTimeOffset.UtcNow;
        if (options.MinWorkerThreads is { } min)
        {
            await log.WriteLineAsync(FormattableString.Invariant($"min threads: {min}, {ServerOptions.MinWorkerThreadsVia}"));
        }

        var server = await StartServerAsync(options, cancellationToken);
        try
        {
            var catalogue = await AppCatalogue.ReadAsync(server.BaseAddress, options.Timeout, cancellationToken);
            var family = catalogue.Family(options.Family);
            var scenarios = family.Select(options.Scenarios);
            var delayMs = options.DelayMs ?? family.DefaultDelayMs;
            var results = new List<ScenarioResult>();
            foreach (var scenario in scenarios)
            {
                server ??= await StartServerAsync(options, cancellationToken);
                await log.WriteLineAsync($"{scenario.Name}: fresh server, {options.Connections} connections for {options.Duration.TotalSeconds:0.#} s ...");
                var result = await MeasureAsync(server, options, scenario, delayMs, log, cancellationToken);
                await server.DisposeAsync();
                server = null;
                await log.WriteLineAsync(
                    $"{scenario.Name}: {result.Load.RequestsPerSecond:0.0} req/s, avg {result.Load.Latency.Average:0} ms, p99 {result.Load.Latency.P99:0} ms, " +
                    $"errors {result.Load.Failures}, threads peak {result.PeakThreads} end {result.ThreadsAtEnd}");
                results.Add(result);
            }

            return new ComparisonResult
            {
                StartedAt = started,
                Family = family.Name,
                Connections = options.Connections,
                DurationSeconds = options.Duration.TotalSeconds,
                TimeoutSeconds = options.Timeout.TotalSeconds,
                DrainSeconds = options.Drain?.TotalSeconds,
                DelayMs = delayMs,
                ProcessorCount = options.ProcessorCount,
                MinWorkerThreads = options.MinWorkerThreads,
                MinWorkerThreadsVia = options.MinWorkerThreads is null ? null : ServerOptions.MinWorkerThreadsVia,
                ThinkTimeMs = options.ThinkTime?.TotalMilliseconds ?? 0,
                Machine = $"{Environment.ProcessorCount} logical CPUs, {System.Runtime.InteropServices.RuntimeInformation.OSDescription}, .NET {Environment.Version}",
                CommandLine = commandLine,
                Results = results,
            };
        }
        finally
        {
            if (server is not null)
            {
                await server.DisposeAsync();
            }
        }
    }

    /// <summary>One warm-up request, then the load with the thread count sampled once a second and a ping probe alongside.</summary>
    /// <param name="log">Told the server's process id as the load starts, so dotnet-stack or dotnet-trace can be pointed at it meanwhile.</param>
    private static async Task<ScenarioResult> MeasureAsync(ServerProcess server, ComparisonOptions options, Scenario scenario, int? delayMs, TextWriter log, CancellationToken cancellationToken)
    {
        var load = scenario.LoadOptions(scenario.Url(server.BaseAddress, delayMs)) with
        {
            Connections = options.Connections,
            Duration = options.Duration,
            Timeout = options.Timeout,
            Drain = options.Drain,
            ThinkTime = options.ThinkTime,
        };
        await WarmUpAsync(load, cancellationToken);

        var ping = new LoadOptions
        {
            Url = new Uri(server.BaseAddress, "api/diagscenario/ping"),
            // Ten pings a second, open loop, on connections of their own: latency counts from the intended send,
            // so a stalled server cannot make the probe politely wait and look fast.
            Connections = 10,
            Duration = options.Duration,
            Timeout = options.Timeout,
            Drain = options.Drain,
            Rate = 10,
        };

        await log.WriteLineAsync(FormattableString.Invariant($"{scenario.Name}: loading server pid {server.ProcessId}"));
        using var sampler = server.SampleThreadCount(TimeSpan.FromSeconds(1));
        using var diagnosis = options.Diagnose ? await LoadDiagnosis.StartAsync(server.ProcessId, options.SnapshotAfter ?? options.Duration / 2, cancellationToken) : null;
        var loadRun = LoadGenerator.RunAsync(load, null, cancellationToken);
        var pingRun = LoadGenerator.RunAsync(ping, null, cancellationToken);
        await Task.WhenAll(loadRun, pingRun);
        diagnosis?.LoadIsOver();
        sampler.Dispose();

        return new ScenarioResult
        {
            Scenario = scenario.Name,
            Verdict = scenario.Verdict,
            Load = await loadRun,
            Ping = await pingRun,
            Threads = sampler.Samples,
            // Analysed now the load is over: a second or more of a core that would otherwise have been taken from the server.
            Diagnosis = diagnosis is null ? null : await diagnosis.AnalyzeAsync(cancellationToken),
        };
    }

    private static Task<ServerProcess> StartServerAsync(ComparisonOptions options, CancellationToken cancellationToken) =>
        ServerProcess.StartAsync(
            new ServerOptions
            {
                AppPath = options.AppPath,
                ProcessorCount = options.ProcessorCount,
                MinWorkerThreads = options.MinWorkerThreads,
                ExtraEnvironment = options.Environment,
            },
            cancellationToken);

    /// <summary>One request as the load sends them, so the first measured request does not pay for JIT and connection set-up.</summary>
    private static async Task WarmUpAsync(LoadOptions load, CancellationToken cancellationToken)
    {
        using var client = new HttpClient { Timeout = load.Timeout };
        using var request = new HttpRequestMessage(load.Method, load.Url)
        {
            Content = load.BodyBytes is { } bytes ? new SlowUploadContent(bytes, load.UploadOver ?? TimeSpan.Zero) : null,
        };
        using var response = await client.SendAsync(request, cancellationToken);
        response.EnsureSuccessStatusCode();
    }
}
