using System.Diagnostics;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.LoadRunner.Server;

/// <summary>
/// One DiagnosticScenarios server in a process of its own, on loopback, with a cold thread pool.
/// Load measured from another process cannot share (and so hide) the server's thread pool.
/// </summary>
public sealed class ServerProcess : IAsyncDisposable
{
    // The server's log: enough for a failure message and for the tests that read its warnings, bounded for a long run.
    private const int MaxCapturedChars = 512 * 1024;
    private readonly ChildProcess _process;

    private ServerProcess(ChildProcess process, Uri baseAddress, IReadOnlyList<Uri> moreAddresses)
    {
        _process = process;
        BaseAddress = baseAddress;
        MoreAddresses = moreAddresses;
    }

    /// <summary><c>http://127.0.0.1:{port}/</c>.</summary>
    public Uri BaseAddress { get; }

    /// <summary><see cref="ServerOptions.MoreUrls"/> as the server listens on them, each port 0 replaced by the free port picked for it.</summary>
    public IReadOnlyList<Uri> MoreAddresses { get; }

    public int ProcessId => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>The last lines the server wrote to stdout, then to stderr.</summary>
    public string Output => _process.Output + _process.Error;

    /// <summary>Starts the server on a free loopback port and returns once it answers <see cref="ServerOptions.ReadyPath"/>.</summary>
    public static async Task<ServerProcess> StartAsync(ServerOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        const int attempts = 3;
        for (var attempt = 1; ; attempt++)
        {
            var server = Launch(options, FreeLoopbackPort.Pick());
            try
            {
                await server.WaitUntilReadyAsync(options, cancellationToken);
                return server;
            }
            catch (ServerStartException) when (attempt < attempts && server.HasExited)
            {
                // Another process may have taken a port between the probe and the bind: try other ones.
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

    public ValueTask DisposeAsync() => _process.DisposeAsync();

    private static ServerProcess Launch(ServerOptions options, int port)
    {
        var baseAddress = new Uri($"http://127.0.0.1:{port}/");
        List<Uri> more = [.. options.MoreUrls.Select(url => new Uri(url) is { Port: 0 } free ? new UriBuilder(free) { Port = FreeLoopbackPort.Pick() }.Uri : new Uri(url))];
        var start = ServerCommand.For(options, baseAddress, more) with { MaxCapturedChars = MaxCapturedChars };
        return new ServerProcess(ChildProcess.Start(start), baseAddress, more);
    }

    private async Task WaitUntilReadyAsync(ServerOptions options, CancellationToken cancellationToken)
    {
        var timeout = options.StartTimeout;
        using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(2) };
        var ping = new Uri(BaseAddress, options.ReadyPath);
        var started = Stopwatch.StartNew();
        while (started.Elapsed < timeout)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (_process.HasExited)
            {
                var exit = await _process.WaitForExitAsync();
                throw new ServerStartException($"The server exited with code {exit.ExitCode} before answering {ping}.\n{Output}");
            }

            try
            {
                using var response = await client.GetAsync(ping, cancellationToken);
                // A port picked free may be taken by another process before this one binds it: that one's server may
                // answer the ping while this one fails to bind and exits. Ready means this process said it listens there.
                if (response.IsSuccessStatusCode && SaysItListensOnEveryAddress())
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

        throw new ServerStartException($"The server did not answer {ping} and log that it listens on {string.Join(", ", Addresses())} within {timeout.TotalSeconds:0} s.\n{Output}");
    }

    // ASP.NET Core's host logs "Now listening on: <address>" for each address it has bound.
    private bool SaysItListensOnEveryAddress()
    {
        var output = _process.Output;
        return Addresses().All(a => output.Contains($"Now listening on: {a}", StringComparison.Ordinal));
    }

    private IEnumerable<string> Addresses() => MoreAddresses.Prepend(BaseAddress).Select(a => a.GetLeftPart(UriPartial.Authority));
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
