using System.Globalization;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.LoadRunner.Server;

/// <summary>The command line and environment of one server process: loopback on a given port, a pinned processor count, a cold pool.</summary>
internal static class ServerCommand
{
    private static readonly string[] InheritedSettingsToDrop =
    [
        "ASPNETCORE_URLS", "DOTNET_URLS", "ASPNETCORE_HTTP_PORTS", "ASPNETCORE_HTTPS_PORTS",
        "DOTNET_ThreadPool_ForceMinWorkerThreads", "DOTNET_PROCESSOR_COUNT",
    ];

    public static ChildProcessStart For(ServerOptions options, Uri baseAddress, IEnumerable<Uri> moreAddresses)
    {
        var (fileName, arguments) = options.RuntimeConfigPath is { } runtimeConfig
            ? (DotnetHost.Command, ["exec", "--runtimeconfig", runtimeConfig, Path.GetFullPath(options.AppPath)])
            : Resolve(options.AppPath);
        if (options.ContentRoot is not null)
        {
            arguments.AddRange(["--contentRoot", options.ContentRoot]);
        }

        arguments.AddRange(["--urls", string.Join(';', moreAddresses.Prepend(baseAddress).Select(a => a.GetLeftPart(UriPartial.Authority)))]);

        var environment = InheritedSettingsToDrop.ToDictionary(key => key, string? (_) => null);
        environment["DOTNET_PROCESSOR_COUNT"] = options.ProcessorCount.ToString(CultureInfo.InvariantCulture);
        environment["ASPNETCORE_ENVIRONMENT"] = options.Environment;

        // The live page's own server on a free port too: servers started one after another, or beside a running app, never collide on 5002.
        environment["LivePage__Port"] = "0";
        if (options.MinWorkerThreads is { } min)
        {
            // Hexadecimal: "C8" is 200 threads. Decimal "200" would be read as 512.
            environment["DOTNET_ThreadPool_ForceMinWorkerThreads"] = min.ToString("X", CultureInfo.InvariantCulture);
        }

        foreach (var (key, value) in options.ExtraEnvironment)
        {
            environment[key] = value;
        }

        return new ChildProcessStart(fileName, arguments)
        {
            WorkingDirectory = options.WorkingDirectory ?? options.ContentRoot ?? Path.GetDirectoryName(Path.GetFullPath(options.AppPath))!,
            Environment = environment,
        };
    }

    private static (string FileName, List<string> Arguments) Resolve(string appPath)
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
        return (DotnetHost.Command, [full]);
    }
}
