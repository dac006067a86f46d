using DiagnosticScenarios.Common.Catalogue;

namespace DiagnosticScenarios.LoadRunner.Server;

/// <summary>How to start one DiagnosticScenarios server process (or another ASP.NET Core app, with its own <see cref="ReadyPath"/>).</summary>
public sealed record ServerOptions
{
    /// <summary>The app's apphost (<c>DiagnosticScenarios</c>, <c>DiagnosticScenarios.exe</c>) or <c>DiagnosticScenarios.dll</c>; an apphost next to a dll is preferred so the process keeps its name.</summary>
    public required string AppPath { get; init; }

    /// <summary>The processor count the runtime sees (<c>DOTNET_PROCESSOR_COUNT</c>); it sets the pool's minimum and how fast it injects threads.</summary>
    public int ProcessorCount { get; init; } = DefaultProcessorCount;

    /// <summary>Two processors, the machine the figures are taken on: unless a server is told otherwise.</summary>
    public const int DefaultProcessorCount = 2;

    /// <summary>
    /// The app's content root (appsettings.json, wwwroot): a project folder serves the live page from its sources in
    /// Development. Null runs the app from the folder of <see cref="AppPath"/>.
    /// </summary>
    public string? ContentRoot { get; init; }

    /// <summary>The directory the process starts in; null for <see cref="ContentRoot"/>, or else the folder of <see cref="AppPath"/>.</summary>
    public string? WorkingDirectory { get; init; }

    /// <summary><c>ASPNETCORE_ENVIRONMENT</c>.</summary>
    public string Environment { get; init; } = "Production";

    /// <summary>
    /// The pool's minimum raised at start, as <c>SetMinThreads</c> would, through <c>DOTNET_ThreadPool_ForceMinWorkerThreads</c>, which the runtime reads as hexadecimal.
    /// Null leaves the pool's default minimum (the processor count).
    /// </summary>
    public int? MinWorkerThreads { get; init; }

    /// <summary>
    /// How <see cref="MinWorkerThreads"/> reaches the server, in words for reports. Of the ways to raise the minimum (the
    /// runtimeconfig setting, the MSBuild property that writes it, <c>SetMinThreads</c>), this one needs neither a rebuild
    /// nor a request: the runtime's environment setting forces the minimum at start.
    /// </summary>
    public const string MinWorkerThreadsVia =
        "forced at start by the environment variable DOTNET_ThreadPool_ForceMinWorkerThreads (hexadecimal; SetMinThreads cannot lower it then)";

    /// <summary>
    /// A runtimeconfig.json to run the app with instead of its own (<c>dotnet exec --runtimeconfig</c>; the process is then
    /// named dotnet): how a setting such as <c>System.Threading.ThreadPool.MinThreads</c> is tried without a rebuild.
    /// </summary>
    public string? RuntimeConfigPath { get; init; }

    /// <summary>
    /// More addresses for the server to listen on besides its plain-HTTP base address, e.g. an https:// one; port 0 asks
    /// for a free port, picked again with the base address's when a start loses a port to another process
    /// (<see cref="ServerProcess.MoreAddresses"/> says which).
    /// </summary>
    public IReadOnlyList<string> MoreUrls { get; init; } = [];

    /// <summary>More environment variables for the server, e.g. <c>Database__Provider=PostgreSql</c>.</summary>
    public IReadOnlyDictionary<string, string> ExtraEnvironment { get; init; } = new Dictionary<string, string>();

    /// <summary>How long the server may take to answer its first ping.</summary>
    public TimeSpan StartTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The path that answers once the server is ready: this app's catalogue, which the runner reads first anyway, or another
    /// app's own (e.g. <c>healthz</c>). Ready
    /// also means the process has logged ASP.NET Core's <c>Now listening on:</c> line for each of its addresses, which an
    /// app logs unless it silences <c>Microsoft.Hosting.Lifetime</c>.
    /// </summary>
    public string ReadyPath { get; init; } = CatalogueAnswer.Route;
}
