using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text.RegularExpressions;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

/// <summary>
/// The app in a process of its own (real Kestrel on 127.0.0.1, a free port, two processors), so a load that
/// starves its thread pool starves that process and not the test. Its console output is kept for assertions.
/// </summary>
public sealed partial class AppProcess : IAsyncDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    private readonly Process _process;
    private readonly ConcurrentQueue<string> _output = new();
    private readonly TaskCompletionSource<Uri> _listening = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private AppProcess(Process process) => _process = process;

    public Uri BaseAddress { get; private set; } = null!;

    public int ProcessId => _process.Id;

    /// <summary>Every line the app wrote so far.</summary>
    public IReadOnlyCollection<string> Output => _output;

    public static async Task<AppProcess> StartAsync(IReadOnlyDictionary<string, string>? settings = null)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            WorkingDirectory = AppProjectDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(Path.Combine(AppProjectDirectory, "bin", Configuration, "net10.0", "DiagnosticScenarios.dll"));
        start.ArgumentList.Add("--urls");
        start.ArgumentList.Add("http://127.0.0.1:0");
        start.ArgumentList.Add("--contentRoot");
        start.ArgumentList.Add(AppProjectDirectory);
        start.Environment["DOTNET_PROCESSOR_COUNT"] = "2";
        start.Environment["ASPNETCORE_ENVIRONMENT"] = "Development";
        start.Environment["Logging__Console__FormatterName"] = "simple";
        start.Environment["Logging__Console__FormatterOptions__SingleLine"] = "true";
        foreach (var (key, value) in settings ?? new Dictionary<string, string>())
        {
            start.Environment[key.Replace(":", "__", StringComparison.Ordinal)] = value;
        }

        var app = new AppProcess(Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start"));
        app._process.OutputDataReceived += (_, e) => app.OnLine(e.Data);
        app._process.ErrorDataReceived += (_, e) => app.OnLine(e.Data);
        app._process.BeginOutputReadLine();
        app._process.BeginErrorReadLine();
        try
        {
            app.BaseAddress = await app._listening.Task.WaitAsync(StartTimeout);
        }
        catch
        {
            await app.DisposeAsync();
            throw;
        }

        return app;
    }

    public HttpClient CreateClient() => new() { BaseAddress = BaseAddress, Timeout = TimeSpan.FromSeconds(30) };

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(15));
        }

        _process.Dispose();
    }

    private void OnLine(string? line)
    {
        if (line is null)
        {
            _listening.TrySetException(new InvalidOperationException("The app exited before it listened:\n" + string.Join('\n', _output)));
            return;
        }

        _output.Enqueue(line);
        if (ListeningLine().Match(line) is { Success: true } match)
        {
            _listening.TrySetResult(new Uri(match.Groups["url"].Value));
        }
    }

    [GeneratedRegex(@"Now listening on: (?<url>http://127\.0\.0\.1:\d+)")]
    private static partial Regex ListeningLine();

    // tests/DiagnosticScenarios.Tests/bin/<Configuration>/net10.0/ → the app is built by the project reference.
    private static string Configuration => new DirectoryInfo(Path.TrimEndingDirectorySeparator(AppContext.BaseDirectory)).Parent!.Name;

    private static string AppProjectDirectory
    {
        get
        {
            var directory = new DirectoryInfo(AppContext.BaseDirectory);
            while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "DiagnosticScenarios.sln")))
            {
                directory = directory.Parent;
            }

            return Path.Combine(directory?.FullName ?? throw new InvalidOperationException("DiagnosticScenarios.sln not found above " + AppContext.BaseDirectory), "src", "DiagnosticScenarios");
        }
    }
}
