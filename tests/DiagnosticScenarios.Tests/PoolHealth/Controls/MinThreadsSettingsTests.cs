using System.Net.Http.Json;
using System.Text.Json;
using System.Text.Json.Nodes;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.PoolHealth.Controls;

/// <summary>
/// The ways to raise the pool's minimum before the app starts, beside the live SetMinThreads control
/// (MinThreadsControlTests): the runtimeconfig.json setting, the MSBuild property the SDK writes into it, and the load
/// runner's environment variable. Each on a server of its own, which reports the minimum it runs with at GET /api/threadpool.
/// </summary>
[StartsNext("the SDK's targets run as a process, and three servers of its own: 3–8 s")]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class MinThreadsSettingsTests : IDisposable
{
    private const string Setting = "System.Threading.ThreadPool.MinThreads";

    // Far from the default (the processor count, pinned to two) and from any value the runtime picks by itself.
    private const int Minimum = 64;

    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("diagnosticscenarios-minthreads-");

    [Fact]
    public async Task RuntimeConfigSetting_RaisesTheMinimumTheAppRunsWith()
    {
        var runtimeConfig = Path.Combine(_folder.FullName, "DiagnosticScenarios.runtimeconfig.json");
        var config = JsonNode.Parse(await File.ReadAllTextAsync(Path.ChangeExtension(LoadExperiment.AppPath, ".runtimeconfig.json")).DefaultTimeout())!;
        config["runtimeOptions"]!["configProperties"]![Setting] = Minimum;
        await File.WriteAllTextAsync(runtimeConfig, config.ToJsonString()).DefaultTimeout();

        var reported = await MinimumReportedWithAsync(runtimeConfig);

        Assert.Equal(Minimum, reported);
    }

    [Fact]
    public async Task MsBuildProperty_IsWrittenIntoTheRuntimeConfig_AndRaisesTheMinimumTheAppRunsWith()
    {
        var runtimeConfig = Path.Combine(_folder.FullName, "DiagnosticScenarios.runtimeconfig.json");
        // The SDK's own targets, as `dotnet build -p:ThreadPoolMinThreads=64` runs them, writing to a folder of the test's.
        var generate = await ChildProcess.RunAsync(
            new ChildProcessStart("dotnet",
            [
                "msbuild", Path.Combine(RepositoryPaths.AppProject, "DiagnosticScenarios.csproj"), "-nologo", "-v:q",
                "-t:ProcessFrameworkReferences;GenerateBuildRuntimeConfigurationFiles",
                $"-p:ThreadPoolMinThreads={Minimum}", $"-p:ProjectRuntimeConfigFilePath={runtimeConfig}",
            ]),
            TimeSpan.FromSeconds(60));
        Assert.True(generate.ExitCode == 0, generate.ToString());
        var written = JsonNode.Parse(await File.ReadAllTextAsync(runtimeConfig).DefaultTimeout())!["runtimeOptions"]!["configProperties"]![Setting];

        var reported = await MinimumReportedWithAsync(runtimeConfig);

        Assert.Equal(Minimum, written?.GetValue<int>());
        Assert.Equal(Minimum, reported);
    }

    /// <summary>
    /// The third way, the one <c>compare --min-threads</c> and the load tests' rescue use: the variable its reports name
    /// (<see cref="ServerOptions.MinWorkerThreadsVia"/>) is the one the server process was given, and the app runs with the
    /// minimum it asked for.
    /// </summary>
    [Fact]
    public async Task RunnersMinimum_ReachesTheServerThroughTheVariableItsReportsName_AndRaisesTheMinimumTheAppRunsWith()
    {
        const string Variable = "DOTNET_ThreadPool_ForceMinWorkerThreads";
        await using var server = await OutOfProcessApp.StartAsync(o => o with { MinWorkerThreads = Minimum });
        using var client = new HttpClient { BaseAddress = server.BaseAddress };

        var environment = (await File.ReadAllTextAsync($"/proc/{server.ProcessId}/environ").DefaultTimeout()).Split('\0');
        var snapshot = await client.GetFromJsonAsync<JsonElement>(new Uri("api/threadpool", UriKind.Relative)).DefaultTimeout();

        Assert.Contains($"{Variable}=40", environment); // 64, which the runtime reads as hexadecimal
        Assert.Contains(Variable, ServerOptions.MinWorkerThreadsVia, StringComparison.Ordinal);
        Assert.Equal(Minimum, snapshot.GetProperty("minWorkerThreads").GetInt32());
    }

    public void Dispose() => _folder.Delete(recursive: true);

    private static async Task<int> MinimumReportedWithAsync(string runtimeConfig)
    {
        await using var server = await OutOfProcessApp.StartAsync(o => o with { RuntimeConfigPath = runtimeConfig });
        using var client = new HttpClient { BaseAddress = server.BaseAddress };
        var snapshot = await client.GetFromJsonAsync<JsonElement>(new Uri("api/threadpool", UriKind.Relative)).DefaultTimeout();
        return snapshot.GetProperty("minWorkerThreads").GetInt32();
    }
}
