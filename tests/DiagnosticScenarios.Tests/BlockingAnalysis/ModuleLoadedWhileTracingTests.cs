using System.Net;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Experiments;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Microsoft.Diagnostics.Tracing;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// A module the process loads while a wait trace records it is named as the runtime's loader spells its file. TraceLog
/// gives such a module's path in lower case, which on a case-sensitive file system is no file: the app's
/// DiagnosticScenarios.Common, which its first stack capture loads, was named <c>diagnosticscenarios.common</c> and counted
/// as the app's by the last rule, with no <c>.deps.json</c> folder and no identity to read; a package loaded that way
/// would have been counted as the app's.
/// </summary>
public sealed class ModuleLoadedWhileTracingTests : IDisposable
{
    private const string LoadedByTheCapture = "DiagnosticScenarios.Common";

    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("module-loaded-");

    [Fact]
    public async Task WaitTrace_NamesAModuleLoadedWhileItRecords_AsTheLoaderSpellsItsFile()
    {
        await using var server = await LoadExperiment.StartServerAsync();
        var trace = Path.Combine(_folder.FullName, "waits.nettrace");

        var captured = await RecordWhileTheAppCapturesAsync(server, trace);
        var loadedWhileRecording = ModulesLoadedWhileRecording(trace);
        var analysis = await Task.Run(() => WaitAnalyzer.Analyze(trace)).DefaultTimeout();

        var named = string.Join("; ", analysis.Modules.Select(m => $"{m.Module} at {m.Path}: {m.Rule}"));
        Assert.True(captured == HttpStatusCode.OK, $"POST /api/threadpool/stacks answered {(int)captured}");
        Assert.True(loadedWhileRecording.Any(p => Path.GetFileNameWithoutExtension(p) == LoadedByTheCapture),
            $"{LoadedByTheCapture} was not loaded while the trace recorded, so this tests nothing: loaded then {string.Join(", ", loadedWhileRecording)}");
        var module = analysis.Modules.FirstOrDefault(m => string.Equals(m.Module, LoadedByTheCapture, StringComparison.OrdinalIgnoreCase));
        Assert.True(module is not null, $"no frame of {LoadedByTheCapture} in the waits: {named}");
        Assert.True(module.Module == LoadedByTheCapture && File.Exists(module.Path) && module.Rule.StartsWith("project in ", StringComparison.Ordinal), named);
        Assert.All(analysis.Modules.Where(m => m.Path is not null), m => Assert.True(File.Exists(m.Path), $"{m.Module} at {m.Path}, no such file"));
    }

    // The capture starts the app's recorder through DiagnosticScenarios.Common, its first use, and its thread waits for the
    // recorder there: the trace holds the module's load and frames of it.
    private static async Task<HttpStatusCode> RecordWhileTheAppCapturesAsync(ServerProcess server, string trace)
    {
        using var control = server.CreateControlClient();
        var status = default(HttpStatusCode);
        await Task.Factory.StartNew(
            () => WaitAnalyzer.Record(server.ProcessId, () =>
            {
                using var response = control.Send(new HttpRequestMessage(HttpMethod.Post, "api/threadpool/stacks"));
                status = response.StatusCode;
            }, trace),
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default).DefaultTimeout();
        return status;
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
