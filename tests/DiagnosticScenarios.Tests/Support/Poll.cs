using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// Waits for a condition by looking again every few milliseconds, bounded: the tests' way to wait for something to
/// happen, rather than sleeping for the time it usually takes.
/// </summary>
internal static class Poll
{
    private static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(50);

    /// <summary>
    /// Whether <paramref name="condition"/> held within <paramref name="within"/>, on the caller's thread: for code that
    /// already runs on a thread of its own and talks to a synchronous API (the browser's driver).
    /// </summary>
    public static bool Until(Func<bool> condition, TimeSpan within)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed >= within)
            {
                return false;
            }

            Thread.Sleep(Interval);
        }

        return true;
    }

    /// <summary>Whether <paramref name="condition"/> held within <paramref name="within"/>.</summary>
    public static async Task<bool> UntilAsync(Func<bool> condition, TimeSpan within)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed >= within)
            {
                return false;
            }

            await Task.Delay(Interval);
        }

        return true;
    }

    /// <summary>
    /// Reads until <paramref name="until"/> holds for what was read, or <paramref name="within"/> has passed; answers
    /// whether it held, and the last value read. A read that hangs fails at <paramref name="within"/>, naming the caller's line.
    /// </summary>
    public static async Task<(bool Met, T Last)> UntilAsync<T>(
        Func<Task<T>> read, Func<T, bool> until, TimeSpan within, TimeSpan? interval = null,
        [CallerFilePath] string file = "", [CallerLineNumber] int line = 0)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var last = await read().TimeoutAfter(within, file, line);
            if (until(last))
            {
                return (true, last);
            }

            if (clock.Elapsed >= within)
            {
                return (false, last);
            }

            await Task.Delay(interval ?? Interval);
        }
    }
}
