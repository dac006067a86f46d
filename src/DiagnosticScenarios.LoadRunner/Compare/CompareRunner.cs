using DiagnosticScenarios.Common.Catalogue;
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
    /// <exception cref="ServerStartException">A server did not start.</exception>
    /// <exception cref="MeasurementException">A scenario's warm-up request failed, so nothing could be measured.</exception>
    public static async Task<ComparisonResult> RunAsync(ComparisonOptions options, string commandLine, TextWriter log, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(log);
        var started = DateTimeOffset.UtcNow;
        if (options.MinWorkerThreads is { } min)
        {
            await log.WriteLineAsync(FormattableString.Invariant($"min threads: {min}, {ServerOptions.MinWorkerThreadsVia}"));
        }

        // Servers started ahead, in the order they are measured in: one is always up and idle while another is measured.
        // A comparison that ends early (a family the app does not serve, a measurement that failed) stops their starts.
        var ahead = new Queue<Task<ServerProcess>>();
        using var startsAhead = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);

        // The last measurement's analysis, under way.
        var analysing = Task.CompletedTask;
        ServerProcess? server = null;
        try
        {
            // The second server starts beside the first, before any load, unless one scenario was asked for.
            var first = StartServerAsync(options, cancellationToken);
            if (options.Scenarios.Count != 1)
            {
                ahead.Enqueue(StartServerAsync(options, startsAhead.Token));
            }

            server = await first;
            var catalogue = await AppCatalogue.ReadAsync(server.BaseAddress, options.Timeout, cancellationToken);
            var family = catalogue.Family(options.Family);
            var scenarios = family.Select(options.Scenarios).ToList();
            var delayMs = options.DelayMs ?? family.DefaultDelayMs;
            var results = new List<ScenarioResult>();

            foreach (var (scenario, index) in scenarios.Select((s, i) => (s, i)))
            {
                server ??= await ahead.Dequeue();

                // The one after the next starts as soon as this load is over, while this server's recordings end and it
                // goes, its records are analysed and the next one answers its warm-up request; it is up, and idle, before
                // the next load starts. (Three servers' database pools are open for that moment.)
                void StartTheOneAfterTheNext()
                {
                    if (index + 2 < scenarios.Count)
                    {
                        ahead.Enqueue(StartServerAsync(options, startsAhead.Token));
                    }
                }

                var (result, diagnosis) = await MeasureAsync(server, options, catalogue, scenario, delayMs, Task.WhenAll([.. ahead, analysing]), StartTheOneAfterTheNext, log, cancellationToken);
                await server.DisposeAsync();
                server = null;

                // Analysed beside the next server's warm-up request, and over before its load starts: a second or more of
                // a core that would otherwise have been taken from a server under load.
                analysing = ReportAsync(result, diagnosis, results, log, cancellationToken);
            }

            await analysing;
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
            // A comparison that failed while a measurement was analysed leaves its records behind it.
            await analysing.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (server is not null)
            {
                await server.DisposeAsync();
            }

            // A comparison that failed while servers were starting ahead leaves none of them behind.
            await startsAhead.CancelAsync();
            foreach (var starting in ahead)
            {
                await ((Task)starting).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                if (starting.IsCompletedSuccessfully)
                {
                    await (await starting).DisposeAsync();
                }
            }
        }
    }

    /// <summary>Analyses a measurement's records, if it has any, and adds the result to <paramref name="results"/> with a line in the log.</summary>
    private static async Task ReportAsync(ScenarioResult result, LoadDiagnosis? diagnosis, List<ScenarioResult> results, TextWriter log, CancellationToken cancellationToken)
    {
        if (diagnosis is not null)
        {
            using (diagnosis)
            {
                result = result with { Diagnosis = await diagnosis.AnalyzeAsync(cancellationToken) };
            }
        }

        await log.WriteLineAsync(
            $"{result.Scenario}: {result.Load.RequestsPerSecond:0.0} req/s, avg {result.Load.Latency.Average:0} ms, p99 {result.Load.Latency.P99:0} ms, " +
            $"errors {result.Load.Failures}, threads peak {result.PeakThreads} end {result.ThreadsAtEnd}");
        results.Add(result);
    }

    /// <summary>One warm-up request, then the load with the thread count sampled once a second and a ping probe alongside.</summary>
    /// <param name="catalogue">The app's catalogue: its baseline route, the probe's, and the scenario's twin.</param>
    /// <param name="othersDone">The servers started ahead and the last measurement's analysis: the load waits for them to be up and done, so no start-up or analysis competes with it for the cores.</param>
    /// <param name="loadOver">Called as soon as the load is over, before the recordings end.</param>
    /// <param name="log">Told the server's process id as the load starts, so dotnet-stack or dotnet-trace can be pointed at it meanwhile.</param>
    /// <returns>The figures, and the diagnosis's records (finished, the server still up) for the caller to analyse once the server is gone.</returns>
    private static async Task<(ScenarioResult Result, LoadDiagnosis? Diagnosis)> MeasureAsync(ServerProcess server, ComparisonOptions options, AppCatalogue catalogue, Scenario scenario, int? delayMs, Task othersDone, Action loadOver, TextWriter log, CancellationToken cancellationToken)
    {
        var pingRoute = catalogue.BaselineRoute;
        var load = scenario.LoadOptions(scenario.Url(server.BaseAddress, delayMs)) with
        {
            Connections = options.Connections,
            Duration = options.Duration,
            Timeout = options.Timeout,
            Drain = options.Drain,
            ThinkTime = options.ThinkTime,
        };
        await WarmUpAsync(load, cancellationToken);
#pragma warning disable VSTHRD003 // deliberate: the servers this comparison started ahead, and its own analysis
        await othersDone;
#pragma warning restore VSTHRD003

        var ping = new LoadOptions
        {
            Url = new Uri(server.BaseAddress, pingRoute.TrimStart('/')),
            // Ten pings a second, open loop, on connections of their own: latency counts from the intended send,
            // so a stalled server cannot make the probe politely wait and look fast.
            Connections = 10,
            Duration = options.Duration,
            Timeout = options.Timeout,
            Drain = options.Drain,
            Rate = 10,
        };

        await log.WriteLineAsync(FormattableString.Invariant($"{scenario.Name}: fresh server, {options.Connections} connections for {options.Duration.TotalSeconds:0.#} s, loading server pid {server.ProcessId}"));
        using var sampler = server.SampleThreadCount(TimeSpan.FromSeconds(1));
        var diagnosis = options.Diagnose ? await LoadDiagnosis.StartAsync(server.ProcessId, options.SnapshotAfter ?? options.Duration / 2, cancellationToken) : null;
        try
        {
            var loadRun = LoadGenerator.RunAsync(load, null, cancellationToken);
            var pingRun = LoadGenerator.RunAsync(ping, null, cancellationToken);
            await Task.WhenAll(loadRun, pingRun);
            loadOver();
            if (diagnosis is not null)
            {
                // The wait trace's session ends with a rundown of the server, which must still be up.
                await diagnosis.FinishRecordingAsync(cancellationToken);
            }

            sampler.Dispose();
            var result = new ScenarioResult
            {
                Scenario = scenario.Name,
                Verdict = scenario.Verdict,
                Twin = catalogue.TwinOf(scenario),
                Load = await loadRun,
                Ping = await pingRun,
                Threads = sampler.Samples,
            };
            return (result, diagnosis);
        }
        catch
        {
            diagnosis?.Dispose();
            throw;
        }
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

    /// <summary>
    /// One request as the load sends them, so the first measured request does not pay for JIT and connection set-up. A
    /// scenario that cannot answer it on a fresh server (a 503 naming a database that is down, say) would only measure its
    /// failure: the comparison stops there and says why.
    /// </summary>
    private static async Task WarmUpAsync(LoadOptions load, CancellationToken cancellationToken)
    {
        var request = $"The warm-up request {load.Method} {load.Url.PathAndQuery}";
        using var client = new HttpClient { Timeout = load.Timeout };
        using var message = new HttpRequestMessage(load.Method, load.Url)
        {
            Content = load.BodyBytes is { } bytes ? new SlowUploadContent(bytes, load.UploadOver ?? TimeSpan.Zero) : null,
        };
        try
        {
            using var response = await client.SendAsync(message, cancellationToken);
            if (!response.IsSuccessStatusCode)
            {
                var body = await response.Content.ReadAsStringAsync(cancellationToken);
                throw new MeasurementException($"{request} answered {(int)response.StatusCode} {response.ReasonPhrase}: {(body.Length > 1000 ? body[..1000] + "…" : body)}");
            }
        }
        catch (HttpRequestException e)
        {
            throw new MeasurementException($"{request} failed: {e.Message}", e);
        }
        catch (TaskCanceledException e) when (!cancellationToken.IsCancellationRequested)
        {
            throw new MeasurementException($"{request} had no answer within {load.Timeout.TotalSeconds:0.#} s (--timeout).", e);
        }
    }
}

/// <summary>A scenario could not be measured: its warm-up request on a fresh server failed. The message says how.</summary>
public sealed class MeasurementException(string message, Exception? innerException = null) : Exception(message, innerException);
