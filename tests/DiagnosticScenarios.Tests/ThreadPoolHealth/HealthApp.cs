using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Load;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

/// <summary>
/// The app as the thread-pool health tests need it: a process of its own (two processors, a fresh pool), in
/// Development with the project folder as content root so the live page is served, and one log line per entry.
/// </summary>
internal static class HealthApp
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    public static Task<ServerProcess> StartAsync() => ServerProcess.StartAsync(new ServerOptions
    {
        AppPath = LoadExperiment.AppPath,
        ContentRoot = RepositoryPaths.AppProject,
        Environment = "Development",
        ExtraEnvironment = new Dictionary<string, string>
        {
            ["Logging__Console__FormatterName"] = "simple",
            ["Logging__Console__FormatterOptions__SingleLine"] = "true",
        },
    }).TimeoutAfter(StartTimeout);

    public static HttpClient CreateClient(this ServerProcess app) => new() { BaseAddress = app.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };

    /// <summary>
    /// A closed-loop load from the test process, bounded in requests and time; the assertions read the server's own figures.
    /// It ends at its duration, abandoning the requests still in flight: a starved server would otherwise hold the test
    /// until they time out, and the server's own figures are what the tests read.
    /// </summary>
    public static Task<LoadReport> LoadAsync(this ServerProcess app, string path, int connections, TimeSpan duration, long maxRequests) =>
        LoadGenerator.RunAsync(new LoadOptions
        {
            Url = new Uri(app.BaseAddress, path),
            Connections = connections,
            Duration = duration,
            Requests = maxRequests,
            DrainInFlight = false,
        }).TimeoutAfter(duration + TimeSpan.FromSeconds(60));
}
