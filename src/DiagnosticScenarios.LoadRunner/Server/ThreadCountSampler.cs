using System.Diagnostics;
using System.Globalization;

namespace DiagnosticScenarios.LoadRunner.Server;

/// <summary>
/// A server's OS thread count, once per interval, from the moment it is created until it is disposed.
/// It samples on a thread of its own so that its timeline has no gaps even if the sampling process is busy.
/// </summary>
public sealed class ThreadCountSampler : IDisposable
{
    private readonly ServerProcess _server;
    private readonly TimeSpan _interval;
    private readonly List<ThreadSample> _samples = [];
    private readonly ManualResetEventSlim _stop = new();
    private readonly Thread _thread;
    private readonly Stopwatch _clock = Stopwatch.StartNew();

    internal ThreadCountSampler(ServerProcess server, TimeSpan interval)
    {
        _server = server;
        _interval = interval;
        Take();
        _thread = new Thread(Loop) { IsBackground = true, Name = "Thread count sampler" };
        _thread.Start();
    }

    public IReadOnlyList<ThreadSample> Samples
    {
        get
        {
            lock (_samples)
            {
                return [.. _samples];
            }
        }
    }

    public int Peak => Samples.Count == 0 ? 0 : Samples.Max(s => s.Threads);

    /// <summary>Takes a last sample and stops.</summary>
    public void Dispose()
    {
        if (_stop.IsSet)
        {
            return;
        }

        _stop.Set();
        _thread.Join();
        Take();
        _stop.Dispose();
    }

    private void Loop()
    {
        while (!_stop.Wait(_interval))
        {
            Take();
        }
    }

    /// <summary>The process's OS thread count now (every thread: pool workers, I/O, timers, GC).</summary>
    private static int ThreadCountOf(int processId)
    {
        if (OperatingSystem.IsLinux())
        {
            // Cheaper than Process.Threads, which builds an object per thread.
            foreach (var line in File.ReadLines($"/proc/{processId}/status"))
            {
                if (line.StartsWith("Threads:", StringComparison.Ordinal))
                {
                    return int.Parse(line.AsSpan("Threads:".Length).Trim(), CultureInfo.InvariantCulture);
                }
            }
        }

        using var process = Process.GetProcessById(processId);
        return process.Threads.Count;
    }

    private void Take()
    {
        if (_server.HasExited)
        {
            return;
        }

        try
        {
            var sample = new ThreadSample(_clock.Elapsed.TotalSeconds, ThreadCountOf(_server.ProcessId));
            lock (_samples)
            {
                _samples.Add(sample);
            }
        }
        catch (Exception e) when (e is IOException or ArgumentException)
        {
            // The process went away between the check and the read.
        }
    }
}

/// <summary>The server's thread count at a time, in seconds since sampling started.</summary>
public sealed record ThreadSample(double Seconds, int Threads);
