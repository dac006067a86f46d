using Microsoft.AspNetCore.Connections;

namespace DiagnosticScenarios.Infrastructure;

/// <summary>
/// Runs the app to its end. When another process holds an address the app is told to listen on, the app ends with one
/// line on stderr that names the address and how to choose another, and exit code 1, instead of an unhandled
/// exception's stack: the first thing a stage laptop may show (macOS's AirPlay Receiver listens on port 5000).
/// </summary>
public static class AppRun
{
    public const int AddressInUseExitCode = 1;

    public static int RunToEnd(this WebApplication app)
    {
        ArgumentNullException.ThrowIfNull(app);
        try
        {
            app.Run();
            return 0;
        }
        catch (IOException failed) when (failed.InnerException is AddressInUseException)
        {
            // The host has stopped and disposed its logging by now: straight to stderr.
            Console.Error.WriteLine(
                $"{failed.Message} Another process listens there: stop it, or give the app another address with --urls, " +
                "e.g. dotnet run --project src/DiagnosticScenarios --urls http://localhost:5010 (on macOS, the AirPlay Receiver listens on port 5000).");
            return AddressInUseExitCode;
        }
    }
}
