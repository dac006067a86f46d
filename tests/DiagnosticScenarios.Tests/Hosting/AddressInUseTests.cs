using System.Net;
using System.Net.Sockets;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Hosting;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.Hosting;

/// <summary>
/// The built app told to listen where another process already listens (port 5000 on a macOS laptop, where the AirPlay
/// Receiver holds it): it ended with an unhandled exception's stack and the runtime's abort.
/// </summary>
public sealed class AddressInUseTests
{
    // The app's start-up on two cores shared with the other functional classes, and its stop.
    private static readonly TimeSpan StartAndStop = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task BuiltApp_WhoseAddressIsTaken_EndsWithALineNamingItAndHowToChooseAnother()
    {
        using var holder = new TcpListener(IPAddress.Loopback, 0);
        holder.Start();
        var taken = $"http://127.0.0.1:{((IPEndPoint)holder.LocalEndpoint).Port}";

        var result = await ChildProcess.RunAsync(
            new ChildProcessStart("dotnet", [LoadExperiment.AppPath, "--urls", taken])
            {
                // The live page's own server on a free port, so that the API's address is the only one taken.
                Environment = new Dictionary<string, string?> { ["LivePage__Port"] = "0" },
            },
            StartAndStop);

        Assert.True(result.ExitCode == AppRun.AddressInUseExitCode, result.ToString());
        Assert.Contains($"Failed to bind to address {taken}: address already in use. Another process listens there: stop it, or give the app another address with --urls", result.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("Unhandled exception", result.Error, StringComparison.Ordinal);
        Assert.Contains($"e.g. {AppRun.StartedElsewhere(Path.GetDirectoryName(LoadExperiment.AppPath)!, "/usr/bin/dotnet")} (on macOS", result.Error, StringComparison.Ordinal);
    }

    /// <summary>
    /// The https launch profile on a machine that never ran <c>dotnet dev-certs https</c> (an empty HOME holds no
    /// certificate): it had ended with an unhandled exception's stack.
    /// </summary>
    [Fact]
    public async Task BuiltApp_ToldToServeHttpsWithoutADevelopmentCertificate_EndsWithKestrelsLineSayingWhatToRun()
    {
        var home = Directory.CreateTempSubdirectory("no-dev-cert-");
        try
        {
            var result = await ChildProcess.RunAsync(
                new ChildProcessStart("dotnet", [LoadExperiment.AppPath, "--urls", $"https://127.0.0.1:{FreeLoopbackPort.Pick()}"])
                {
                    Environment = new Dictionary<string, string?> { ["LivePage__Port"] = "0", ["HOME"] = home.FullName, ["DOTNET_CLI_HOME"] = home.FullName },
                },
                StartAndStop);

            Assert.True(result.ExitCode == AppRun.StartFailedExitCode, result.ToString());
            Assert.Contains("dotnet dev-certs https", result.Error, StringComparison.Ordinal);
            Assert.DoesNotContain("Unhandled exception", result.Error, StringComparison.Ordinal);
            Assert.DoesNotContain("   at ", result.Error, StringComparison.Ordinal);
        }
        finally
        {
            home.Delete(recursive: true);
        }
    }

    [Theory]
    [InlineData("/home/me/DiagnosticScenarios/src/DiagnosticScenarios/bin/Debug/net10.0/", "/home/me/DiagnosticScenarios/src/DiagnosticScenarios/bin/Debug/net10.0/DiagnosticScenarios", "dotnet run --project src/DiagnosticScenarios --urls http://localhost:5010")]
    [InlineData("/home/me/DiagnosticScenarios/src/DiagnosticScenarios/bin/Release/net10.0/", "/usr/share/dotnet/dotnet", "dotnet run -c Release --project src/DiagnosticScenarios --urls http://localhost:5010")]
    [InlineData("/home/me/DiagnosticScenarios/publish/", "/usr/share/dotnet/dotnet", "dotnet /home/me/DiagnosticScenarios/publish/DiagnosticScenarios.dll --urls http://localhost:5010")]
    [InlineData("/opt/demo app/", "/opt/demo app/DiagnosticScenarios", "\"/opt/demo app/DiagnosticScenarios\" --urls http://localhost:5010")]
    public void HowToStartItElsewhere_IsTheWayItWasStarted(string appDirectory, string processPath, string expected) =>
        Assert.Equal(expected, AppRun.StartedElsewhere(appDirectory, processPath));
}
