namespace DiagnosticScenarios.PoolHealth.Detection;

/// <summary>The thread pool's minimum worker and I/O threads, as the runtime reads them back.</summary>
public readonly record struct MinThreads(int Workers, int Io)
{
    public static MinThreads Now()
    {
        ThreadPool.GetMinThreads(out var workers, out var io);
        return new MinThreads(workers, io);
    }
}
