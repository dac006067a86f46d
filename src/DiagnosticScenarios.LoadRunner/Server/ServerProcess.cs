using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace DiagnosticScenarios.LoadRunner.Server;

/// <summary>
/// One DiagnosticScenarios server in a process of its own, on loopback, with a cold thread pool.
/// Load measured from another process cannot share (and so hide) the server's thread pool.
/// </summary>
public sealed class ServerProcess : IAsyncDisposable
{
    private const int MaxCapturedLines = 2000;
    private static readonly string[] InheritedSettingsToDrop =
    [
        "ASPNETCORE_URLS", "DOTNET_URLS", "ASPNETCORE_HTTP_PORTS", "ASPNETCORE_HTTPS_PORTS",
        "DOTNET_ThreadPool_ForceMinWorkerThreads", "DOTNET_PROCESSOR_COUNT",
    ];

    private readonly Process _process;
    private readonly Queue<string> _output = new();

    private ServerProcess(Process process, Uri baseAddress)
    {
        _process = process;
        BaseAddress = baseAddress;
    }

    /// <summary><c>http://127.0.0.1:{port}/</c>.</summary>
    public Uri BaseAddress { get; }

    public int ProcessId => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>The last lines the server wrote to stdout and stderr.</summary>
    public string Output
    {
        get
        {
            lock (_output)
            {
                return string.Join('\n', _output);
            }
        }
    }

    /// <summary>Starts the server on a free loopback port and returns once it answers <c>/api/diagscenario/ping</c>.</summary>
    public static async Task<ServerProcess> StartAsync(ServerOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        const int attempts = 3;
        for (var attempt = 1; ; attempt++)
        {
            var server = Launch(options, FreeLoopbackPort());
            try
            {
                await server.WaitUntilReadyAsync(options.StartTimeout, cancellationToken);
                return server;
            }
            catch (ServerStartException) when (attempt < attempts && server.HasExited)
            {
                // Another process may have taken the port between the probe and the bind: try another.
                await server.DisposeAsync();
            }
            catch
            {
                await server.DisposeAsync();
                throw;
            }
        }
    }

    /// <summary>The server's OS thread count now (every thread: pool workers, I/O, timers, GC).</summary>
    public int ThreadCount()
    {
        if (OperatingSystem.IsLinux())
        {
            // Cheaper than Process.Threads, which builds an object per thread.
            foreach (var line in File.ReadLines($"/proc/{_process.Id}/status"))
            {
                if (line.StartsWith("Threads:", StringComparison.Ordinal))
                {
                    return int.Parse(line.AsSpan("Threads:".Length).Trim(), CultureInfo.InvariantCulture);
                }
            }
        }

        _process.Refresh();
        return _process.Threads.Count;
    }

    /// <summary>Samples <see cref="ThreadCount"/> on a timer until the returned sampler is disposed.</summary>
    public ThreadCountSampler SampleThreadCount(TimeSpan interval) => new(this, interval);

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
            }

            using var exit = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            await _process.WaitForExitAsync(exit.Token);
        }
        catch (InvalidOperationException)
        {
            // Never started or already reaped.
        }
        catch (OperationCanceledException)
        {
            // A process that ignores SIGKILL for 10 s is beyond our reach; do not hang the caller.
        }
        finally
        {
            _process.Dispose();
        }
    }

    private static ServerProcess Launch(ServerOptions options, int port)
    {
        var (fileName, leadingArguments) = ResolveCommand(options.AppPath);
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

        var baseAddress = new Uri($"http://127.0.0.1:{port}/");
        startInfo.ArgumentList.Add("--urls");
        startInfo.ArgumentList.Add($"http://127.0.0.1:{port}");

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

        var process = new Process { StartInfo = startInfo, EnableRaisingEvents = true };
        var server = new ServerProcess(process, baseAddress);
        process.OutputDataReceived += (_, e) => server.Capture(e.Data);
        process.ErrorDataReceived += (_, e) => server.Capture(e.Data);
        if (!process.Start())
        {
            throw new ServerStartException($"Could not start {fileName}.");
        }

        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return server;
    }

    private static (string FileName, string[] Arguments) ResolveCommand(string appPath)
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

    private static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private async Task WaitUntilReadyAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(2) };
        var ping = new Uri(BaseAddress, "api/diagscenario/ping");
        var started = Stopwatch.StartNew();
        while (started.Elapsed < timeout)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (_process.HasExited)
            {
                throw new ServerStartException($"The server exited with code {_process.ExitCode} before answering {ping}.\n{Output}");
            }

            try
            {
                using var response = await client.GetAsync(ping, cancellationToken);
                if (response.IsSuccessStatusCode)
                {
                    return;
                }
            }
            catch (HttpRequestException)
            {
                // Not listening yet.
            }
            catch (TaskCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                // Listening but slow to answer its first request.
            }

            await Task.Delay(TimeSpan.FromMilliseconds(100), cancellationToken);
        }

        throw new ServerStartException($"The server did not answer {ping} within {timeout.TotalSeconds:0} s.\n{Output}");
    }

    private void Capture(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_output)
        {
            _output.Enqueue(line);
            if (_output.Count > MaxCapturedLines)
            {
                _output.Dequeue();
            }
        }
    }
}

/// <summary>The server did not start or did not become ready; the message carries its output.</summary>
public sealed class ServerStartException : Exception
{
    public ServerStartException()
    {
    }

    public ServerStartException(string message)
        : base(message)
    {
    }

    public ServerStartException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
