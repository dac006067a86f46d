using System.Collections.Concurrent;
using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Scenarios.Mock;

/// <summary>The static cache the memory-leak tutorial finds with dotnet-dump and gcroot.</summary>
public sealed class MemoryLeakScenario(IOptions<ScenarioOptions> options)
{
    // Roots every leaked customer for the life of the process: the leak the tutorial hunts.
    private static readonly ConcurrentQueue<Customer[]> LeakedCustomers = new();
    private static long s_leakedKb;

    public long LeakedKb => Interlocked.Read(ref s_leakedKb);

    /// <summary>Leaks about <paramref name="kb"/> kilobytes unless that would pass the configured cap.</summary>
    /// <remarks>The kilobytes are reserved first and allocated after, outside any lock: a large leak never blocks another request.</remarks>
    public bool TryLeak(int kb, out long leakedKb, out long capKb)
    {
        capKb = options.Value.MemLeakCapKb;
        long before;
        do
        {
            before = Interlocked.Read(ref s_leakedKb);
            if (before + kb > capKb)
            {
                leakedKb = before;
                return false;
            }
        }
        while (Interlocked.CompareExchange(ref s_leakedKb, before + kb, before) != before);

        // About 100 bytes per customer, as in the tutorial's sample.
        var customers = new Customer[kb * 1000 / 100];
        for (var i = 0; i < customers.Length; i++)
        {
            customers[i] = new Customer(Guid.NewGuid().ToString());
        }

        // BAD: the static queue keeps these customers reachable until the process ends; gcroot shows the path.
        LeakedCustomers.Enqueue(customers);
        leakedKb = before + kb;
        return true;
    }
}
