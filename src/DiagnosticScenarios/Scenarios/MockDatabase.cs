using System.Runtime.CompilerServices;

namespace DiagnosticScenarios.Scenarios;

/// <summary>
/// A database that answers after a delay: the one place every mock scenario waits.
/// It offers the two faces a real driver has, an asynchronous query and a blocking one.
/// </summary>
public sealed class MockDatabase
{
    /// <summary>The query as an async driver runs it: no thread is held while it is in flight.</summary>
    public async Task<string> QueryAsync(TimeSpan delay, CancellationToken cancellationToken = default)
    {
        await Task.Delay(delay, cancellationToken);
        return "row";
    }

    /// <summary>The query as a synchronous driver runs it: the calling thread blocks until the answer arrives.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)] // a real driver's blocking call is never inlined into its caller; neither is this one
    public string Query(TimeSpan delay)
    {
        // A blocking socket read looks like this to the thread pool: a thread parked, no notification.
#pragma warning disable DSB003 // deliberate: the mock driver's query blocks its caller as a synchronous driver's does
        Thread.Sleep(delay);
#pragma warning restore DSB003
        return "row";
    }
}
