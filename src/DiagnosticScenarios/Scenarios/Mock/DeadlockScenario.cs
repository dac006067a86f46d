namespace DiagnosticScenarios.Scenarios.Mock;

/// <summary>
/// The debug-deadlock tutorial's deadlock: two threads take two locks in opposite order, then
/// <see cref="WaitingThreads"/> more queue on the first. Dedicated threads, so the pool is untouched.
/// </summary>
public sealed class DeadlockScenario
{
    public const int WaitingThreads = 300;

    private readonly Lock _first = new();
    private readonly Lock _second = new();
    private int _started;
    private int _locksHeld;
    private DateTimeOffset _startedAt;

    /// <summary>Starts the deadlock unless this process already has one.</summary>
    public bool TryStart(out DateTimeOffset startedAt)
    {
        if (Interlocked.Exchange(ref _started, 1) == 1)
        {
            startedAt = _startedAt;
            return false;
        }

        _startedAt = startedAt = DateTimeOffset.UtcNow;
        StartThread("deadlock-first", () => TakeInOrder(_first, _second));
        StartThread("deadlock-second", () => TakeInOrder(_second, _first));
        for (var i = 0; i < WaitingThreads; i++)
        {
            StartThread($"deadlock-waiter-{i}", () =>
            {
                lock (_first)
                {
                    Thread.Sleep(100);
                }
            });
        }

        return true;
    }

    /// <summary>Completes once both deadlocked threads hold their first lock and the waiters have had a moment to queue.</summary>
    public async Task WaitUntilDeadlockedAsync(CancellationToken cancellationToken)
    {
        while (Volatile.Read(ref _locksHeld) < 2)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(10), cancellationToken);
        }

        await Task.Delay(TimeSpan.FromMilliseconds(200), cancellationToken);
    }

    private void TakeInOrder(Lock held, Lock wanted)
    {
        lock (held)
        {
            Interlocked.Increment(ref _locksHeld);
            SpinWait.SpinUntil(() => Volatile.Read(ref _locksHeld) == 2);

            // BAD: takes a second lock while holding the first; the other thread takes them in the opposite order.
            lock (wanted)
            {
            }
        }
    }

    private static void StartThread(string name, Action body) =>
        new Thread(() => body(), maxStackSize: 256 * 1024) { Name = name, IsBackground = true }.Start();
}
