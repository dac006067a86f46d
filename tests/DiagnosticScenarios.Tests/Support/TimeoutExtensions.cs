using System.Runtime.CompilerServices;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// Bounds every await in the tests, and names the line that hung when one does; or, where no answer is the test's data
/// rather than its failure (a starved server's ping), gives a call its patience and says whether it answered.
/// </summary>
public static class TimeoutExtensions
{
    public static readonly TimeSpan Default = TimeSpan.FromSeconds(30);

#pragma warning disable VSTHRD003 // a timeout helper awaits the task it is handed; tests have no SynchronizationContext to deadlock on
    public static Task<T> DefaultTimeout<T>(this Task<T> task, [CallerFilePath] string file = "", [CallerLineNumber] int line = 0) =>
        task.TimeoutAfter(Default, file, line);

    public static Task DefaultTimeout(this Task task, [CallerFilePath] string file = "", [CallerLineNumber] int line = 0) =>
        task.TimeoutAfter(Default, file, line);
#pragma warning restore VSTHRD003

    public static async Task<T> TimeoutAfter<T>(this Task<T> task, TimeSpan timeout, [CallerFilePath] string file = "", [CallerLineNumber] int line = 0)
    {
        try
        {
            return await task.WaitAsync(timeout);
        }
        catch (TimeoutException exception)
        {
            throw new TimeoutException($"The awaited operation at {Path.GetFileName(file)}:{line} did not complete within {timeout}.", exception);
        }
    }

    public static async Task TimeoutAfter(this Task task, TimeSpan timeout, [CallerFilePath] string file = "", [CallerLineNumber] int line = 0)
    {
        try
        {
            await task.WaitAsync(timeout);
        }
        catch (TimeoutException exception)
        {
            throw new TimeoutException($"The awaited operation at {Path.GetFileName(file)}:{line} did not complete within {timeout}.", exception);
        }
    }

    /// <summary>
    /// Gives <paramref name="call"/> <paramref name="patience"/> to answer, through the token it is handed: its value and how
    /// long it took, or no value when the patience ran out first. Any other failure is the call's own, and thrown.
    /// </summary>
    public static async Task<(bool Answered, T? Value, TimeSpan Took)> AnswerWithinAsync<T>(TimeSpan patience, Func<CancellationToken, Task<T>> call)
    {
        ArgumentNullException.ThrowIfNull(call);
        using var giveUp = new CancellationTokenSource(patience);
        var clock = System.Diagnostics.Stopwatch.StartNew();
        try
        {
            return (true, await call(giveUp.Token), clock.Elapsed);
        }
        catch (OperationCanceledException) when (giveUp.IsCancellationRequested)
        {
            return (false, default, clock.Elapsed);
        }
    }
}
