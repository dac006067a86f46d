using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace DiagnosticScenarios.LoadRunner.Server;

/// <summary>
/// One DiagnosticScenarios server in a process of its own, on loopback, with a cold thread pool.
/// Load measured from another process cannot share (and so hide) the server's thread pool.
/// </summary>
public sealed class ServerProcess : IAsyncDisposable
{
    private const int MaxCapturedLines = 2000;
    private readonly Process _process;
    private readonly OutputTail _output = new(MaxCapturedLines);

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
    public string Output => _output.ToString();

    /// <summary>Starts the server on a free loopback port and returns once it answers <see cref="ServerOptions.ReadyPath"/>.</summary>
    public static async Task<ServerProcess> StartAsync(ServerOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        const int attempts = 3;
        for (var attempt = 1; ; attempt++)
        {
            var server = Launch(options, FreeLoopbackPort());
            try
            {
                await server.WaitUntilReadyAsync(options.ReadyPath, options.StartTimeout, cancellationToken);
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

    /// <summary>Samples the server's OS thread count on a timer until the returned sampler is disposed.</summary>
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
        var baseAddress = new Uri($"http://127.0.0.1:{port}/");
        var startInfo = ServerCommand.For(options, baseAddress);
        var process = new Process { StartInfo = startInfo, EnableRaisingEvents = true };
        var server = new ServerProcess(process, baseAddress);
        process.OutputDataReceived += (_, e) => server._output.Add(e.Data);
        process.ErrorDataReceived += (_, e) => server._output.Add(e.Data);
        if (!process.Start())
        {
            throw new ServerStartException($"Could not start {startInfo.FileName}.");
        }

        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return server;
    }

    private static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private async Task WaitUntilReadyAsync(string readyPath, TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(2) };
        var ping = new Uri(BaseAddress, readyPath);
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
