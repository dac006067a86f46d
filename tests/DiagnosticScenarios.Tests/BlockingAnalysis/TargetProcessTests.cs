using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.Common;
using Microsoft.Diagnostics.NETCore.Client;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// <c>-n NAME</c> finds an app started as <c>dotnet NAME.dll</c> (docs/running.md's published folder), whose process is named
/// <c>dotnet</c>, not NAME.
/// </summary>
public sealed class TargetProcessTests
{
    [Theory]
    [InlineData("DiagnosticScenarios", "dotnet", "publish/DiagnosticScenarios.dll")]
    [InlineData("Contoso.Orders", "/usr/share/dotnet/dotnet", "exec", "--runtimeconfig", "bin/Contoso.Orders.runtimeconfig.json", "bin/Contoso.Orders.dll", "--urls", "http://127.0.0.1:0")]
    [InlineData(null, "dotnet", "run", "--project", "src/DiagnosticScenarios")]
    [InlineData(null, "/srv/demo/DiagnosticScenarios", "--urls", "http://localhost:5010")]
    [InlineData(null, "dotnet")]
    public void EntryAssemblyName_IsTheDllTheDotnetHostRuns(string? expected, params string[] commandLine) =>
        Assert.Equal(expected, TargetProcess.EntryAssemblyName(commandLine));

    [Fact]
    public async Task AnAppStartedThroughDotnet_IsFoundByItsAssemblysName_ThoughItsProcessIsNamedDotnet()
    {
        var fixture = FixtureApp.ContosoOrders("Debug");
        await using var app = ChildProcess.Start(new ChildProcessStart("dotnet", [fixture.ServerOptions.AppPath, "--urls", "http://127.0.0.1:0"])
        {
            TimeLimit = TimeSpan.FromSeconds(60),
        });
        // Its runtime publishes the diagnostic port as it starts, before any of the app's code runs.
        Assert.True(await Poll.UntilAsync(() => DiagnosticsClient.GetPublishedProcesses().Contains(app.Id), TimeSpan.FromSeconds(30)), "No diagnostic port within 30 s");
        using var process = System.Diagnostics.Process.GetProcessById(app.Id);

        Assert.Equal("dotnet", process.ProcessName);
        Assert.Equal(fixture.Name, TargetProcess.EntryAssemblyName(app.Id));
        // Other classes may run the same fixture at the same moment: this one is among those the name finds.
        Assert.Contains(app.Id, TargetProcess.StartedThroughDotnet(fixture.Name));
    }
}
