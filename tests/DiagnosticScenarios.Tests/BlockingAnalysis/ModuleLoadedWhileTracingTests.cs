using System.Net;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Experiments;
using Microsoft.Diagnostics.Tracing;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// A module the process loads while a wait trace records it is named as the runtime's loader spells its file. TraceLog
/// gives such a module's path in lower case, which on a case-sensitive file system is no file, with no <c>.deps.json</c>
/// beside it and no identity to read: a package would be counted as the app's by the last rule. The witness is the SQL
/// driver, a package the app loads with its first query.
/// </summary>
public sealed class ModuleLoadedWhileTracingTests : IDisposable
{
    private const string LoadedByTheFirstQuery = "Microsoft.Data.SqlClient";

    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("module-loaded-");

    [Fact]
    public async Task WaitTrace_NamesAModuleLoadedWhileItRecords_AsTheLoaderSpellsItsFile()
    {
        await using var server = await LoadExperiment.StartServerAsync();
        var trace = Path.Combine(_folder.FullName, "waits.nettrace");

        var answered = await RecordTheAppsFirstQueriesAsync(server, trace);
        var loadedWhileRecording = ModulesLoadedWhileRecording(trace);
        var analysis = await Task.Run(() => WaitAnalyzer.Analyze(trace)).DefaultTimeout();

        var named = string.Join("; ", analysis.Modules.Select(m => $"{m.Module} at {m.Path}: {m.Rule}"));
        Assert.All(answered, status => Assert.Equal(HttpStatusCode.OK, status));
        Assert.True(loadedWhileRecording.Any(p => Path.GetFileNameWithoutExtension(p) == LoadedByTheFirstQuery),
            $"{LoadedByTheFirstQuery} was not loaded while the trace recorded, so this tests nothing: loaded then {string.Join(", ", loadedWhileRecording)}");
        var module = analysis.Modules.FirstOrDefault(m => string.Equals(m.Module, LoadedByTheFirstQuery, StringComparison.OrdinalIgnoreCase));
        Assert.True(module is not null, $"no frame of {LoadedByTheFirstQuery} in the waits: {named}");
        Assert.True(module.Module == LoadedByTheFirstQuery && File.Exists(module.Path) && !module.IsApp && module.Rule.StartsWith("package in ", StringComparison.Ordinal), named);
        Assert.All(analysis.Modules.Where(m => m.Path is not null), m => Assert.True(File.Exists(m.Path), $"{m.Module} at {m.Path}, no such file"));
    }

    // The sync shape's pool threads wait inside the driver for their queries (on the embedded responder): the trace holds
    // the driver's load, from runtimes/<rid>/lib/ under the app's folder, and frames of it.
    private static async Task<HttpStatusCode[]> RecordTheAppsFirstQueriesAsync(ServerProcess server, string trace)
    {
        using var client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };
        var answered = new HttpStatusCode[4];
        await Task.Factory.StartNew(
            () => WaitAnalyzer.Record(server.ProcessId, () => Parallel.For(0, answered.Length, i =>
            {
                using var response = client.Send(new HttpRequestMessage(HttpMethod.Get, "api/sqlscenario/sync?delayMs=500"));
                answered[i] = response.StatusCode;
            }), trace),
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default).DefaultTimeout();
        return answered;
    }

    public void Dispose() => _folder.Delete(recursive: true);

    // The files of the loader's events while the session ran, not those its rundown lists at the end.
    private static List<string> ModulesLoadedWhileRecording(string trace)
    {
        var paths = new List<string>();
        using var source = new EventPipeEventSource(trace);
        source.Clr.LoaderModuleLoad += data => paths.Add(data.ModuleILPath);
        source.Process();
        return paths;
    }
}
