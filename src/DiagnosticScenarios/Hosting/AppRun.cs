using DiagnosticScenarios.Common;
using Microsoft.AspNetCore.Connections;

namespace DiagnosticScenarios.Hosting;

/// <summary>
/// Runs the app to its end. When another process holds an address the app is told to listen on, the app ends with one
/// line on stderr that names the address and how to choose another, and exit code 1, instead of an unhandled
/// exception's stack: the first thing a stage laptop may show (macOS's AirPlay Receiver listens on port 5000). An https
/// address on a machine without a development certificate ends the same way, with Kestrel's line saying what to run.
/// </summary>
public static class AppRun
{
    public const int AddressInUseExitCode = 1;

    /// <summary>Kestrel refused the addresses or certificates it was given.</summary>
    public const int StartFailedExitCode = 1;

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
                $"e.g. {StartedElsewhere(AppContext.BaseDirectory, Environment.ProcessPath)} (on macOS, the AirPlay Receiver listens on port 5000).");
            return AddressInUseExitCode;
        }
        catch (InvalidOperationException failed) when (failed.Source == KestrelCore)
        {
            // Kestrel's own refusal of its configuration, e.g. an https address on a machine without a development
            // certificate: its message says what to run; its stack says nothing more.
            Console.Error.WriteLine(failed.Message);
            return StartFailedExitCode;
        }
    }

    /// <summary>The assembly whose exceptions are Kestrel's refusals of its configuration.</summary>
    private const string KestrelCore = "Microsoft.AspNetCore.Server.Kestrel.Core";

    /// <summary>
    /// The command that starts this app on port 5010, the way it was started: <c>dotnet run</c> from a build's
    /// <c>bin/CONFIGURATION/FRAMEWORK</c> folder, the published dll through <c>dotnet</c>, or the published executable.
    /// </summary>
    public static string StartedElsewhere(string appDirectory, string? processPath)
    {
        const string Elsewhere = "--urls http://localhost:5010";
        if (BuildLayout.Of(appDirectory) is { } built)
        {
            var release = string.Equals(built.Configuration, "Release", StringComparison.OrdinalIgnoreCase) ? "-c Release " : "";
            return $"dotnet run {release}--project src/DiagnosticScenarios {Elsewhere}";
        }

        var throughDotnet = processPath is null || DotnetHost.IsHost(processPath);
        var app = Path.Combine(Path.GetFullPath(appDirectory), "DiagnosticScenarios" + (throughDotnet ? ".dll" : Path.GetExtension(processPath)));
        return $"{(throughDotnet ? "dotnet " : "")}{Quoted(app)} {Elsewhere}";
    }

    private static string Quoted(string path) => path.Contains(' ', StringComparison.Ordinal) ? $"\"{path}\"" : path;
}
