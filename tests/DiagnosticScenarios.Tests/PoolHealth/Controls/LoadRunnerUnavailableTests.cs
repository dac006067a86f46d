using System.Net;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;

namespace DiagnosticScenarios.Tests.PoolHealth.Controls;

/// <summary>
/// The page's Start load when the runner cannot run: a 503 naming where the app looked and why, never a 500, and the app
/// serves on. On a server of its own: the load targets the app's own http address, which only Kestrel has.
/// </summary>
public sealed class LoadRunnerUnavailableTests : IDisposable
{
    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("diagnosticscenarios-runner-");

    public static TheoryData<string, string> Runners => new()
    {
        { "missing", "The load runner is not at" },
        // A file the operating system will not execute (no execute bit, not a .dll for dotnet): Process.Start's
        // Win32Exception, which must not escape as a 500.
        { "not executable", "The load runner at" },
    };

    [Theory]
    [MemberData(nameof(Runners))]
    public async Task StartLoad_Answers503NamingTheRunner_WhenItCannotRun(string runner, string detail)
    {
        var path = Path.Combine(_folder.FullName, "runner");
        if (runner == "not executable")
        {
            await File.WriteAllTextAsync(path, "#!/bin/sh\nexit 0\n").DefaultTimeout();
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }

        await using var app = await HealthApp.StartAsync(new Dictionary<string, string> { ["LoadRunner__Path"] = path });
        using var client = app.CreateControlClient();

        using var response = await client.PostAsync(new Uri("/api/threadpool/load?scenario=diagscenario/ping&connections=1&durationSeconds=1", UriKind.Relative), null).DefaultTimeout();
        using var ping = await client.GetAsync(new Uri("/api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.ServiceUnavailable);
        Assert.StartsWith(detail, problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.Contains(path, problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
    }

    public void Dispose() => _folder.Delete(recursive: true);
}
