using Microsoft.Extensions.Options;

namespace DiagnosticScenarios.Scenarios;

/// <summary>The static cache the memory-leak tutorial finds with dotnet-dump and gcroot.</summary>
public sealed class MemoryLeakScenario(IOptions<ScenarioOptions> options)
{
    // Roots every leaked customer for the life of the process: the leak the tutorial hunts.
    private static readonly List<Customer> LeakedCustomers = [];
    private static readonly Lock Gate = new();
    private static long s_leakedKb;

    public long LeakedKb
    {
        get
        {
            lock (Gate)
            {
                return s_leakedKb;
            }
        }
    }

    /// <summary>Leaks about <paramref name="kb"/> kilobytes unless that would pass the configured cap.</summary>
    public bool TryLeak(int kb, out long leakedKb, out long capKb)
    {
        capKb = options.Value.MemLeakCapKb;
        lock (Gate)
        {
            leakedKb = s_leakedKb;
            if (s_leakedKb + kb > capKb)
            {
                return false;
            }

            // About 100 bytes per customer, as in the tutorial's sample.
            var customers = kb * 1000 / 100;
            LeakedCustomers.EnsureCapacity(LeakedCustomers.Count + customers);
            for (var i = 0; i < customers; i++)
            {
                LeakedCustomers.Add(new Customer(Guid.NewGuid().ToString()));
            }

            s_leakedKb += kb;
            leakedKb = s_leakedKb;
            return true;
        }
    }
}
