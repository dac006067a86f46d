using System.Diagnostics;
using System.Globalization;

namespace DiagnosticScenarios.LoadRunner.Server;

/// <summary>The command line and environment of one server process: loopback on a given port, a pinned processor count, a cold pool.</summary>
internal static class ServerCommand
{
    private static readonly string[] InheritedSettingsToDrop =
    [
        "ASPNETCORE_URLS", "DOTNET_URLS", "ASPNETCORE_HTTP_PORTS", "ASPNETCORE_HTTPS_PORTS",
        "DOTNET_ThreadPool_ForceMinWorkerThreads", "DOTNET_PROCESSOR_COUNT",
    ];

    public static ProcessStartInfo For(ServerOptions options, Uri baseAddress)
    {
        var (fileName, leadingArguments) = Resolve(options.AppPath);
        var startInfo = new ProcessStartInfo(fileName)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            // The app finds appsettings.json in its content root, the current directory by default.
            WorkingDirectory = options.ContentRoot ?? Path.GetDirectoryName(Path.GetFullPath(options.AppPath))!,
        };
        foreach (var argument in leadingArguments)
        {
            startInfo.ArgumentList.Add(argument);
        }

        if (options.ContentRoot is not null)
        {
            startInfo.ArgumentList.Add("--contentRoot");
            startInfo.ArgumentList.Add(options.ContentRoot);
        }

        startInfo.ArgumentList.Add("--urls");
        startInfo.ArgumentList.Add(baseAddress.GetLeftPart(UriPartial.Authority));

        foreach (var key in InheritedSettingsToDrop)
        {
            startInfo.Environment.Remove(key);
        }

        startInfo.Environment["DOTNET_PROCESSOR_COUNT"] = options.ProcessorCount.ToString(CultureInfo.InvariantCulture);
        startInfo.Environment["ASPNETCORE_ENVIRONMENT"] = options.Environment;
        if (options.MinWorkerThreads is { } min)
        {
            // Hexadecimal: "C8" is 200 threads. Decimal "200" would be read as 512.
            startInfo.Environment["DOTNET_ThreadPool_ForceMinWorkerThreads"] = min.ToString("X", CultureInfo.InvariantCulture);
        }

        foreach (var (key, value) in options.ExtraEnvironment)
        {
            startInfo.Environment[key] = value;
        }

        return startInfo;
    }

    private static (string FileName, string[] Arguments) Resolve(string appPath)
    {
        var full = Path.GetFullPath(appPath);
        if (!full.EndsWith(".dll", StringComparison.OrdinalIgnoreCase))
        {
            return (full, []);
        }

        var apphost = Path.ChangeExtension(full, OperatingSystem.IsWindows() ? ".exe" : null);
        if (File.Exists(apphost))
        {
            return (apphost, []);
        }

        // No apphost: run the dll with the dotnet that runs us (the process is then named dotnet, not DiagnosticScenarios).
        var dotnet = System.Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
        return (dotnet, [full]);
    }
}
