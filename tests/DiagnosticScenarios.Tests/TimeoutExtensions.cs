using System.Runtime.CompilerServices;

namespace DiagnosticScenarios.Tests;

/// <summary>Bounds every await in the tests, and names the line that hung when one does.</summary>
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
}
