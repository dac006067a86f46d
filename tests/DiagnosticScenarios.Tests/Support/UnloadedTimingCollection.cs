namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// Timing tests run alone: in-process tests share the test host's thread pool and CPU with whatever else
/// runs in parallel, and an unloaded latency is only unloaded when nothing else is running.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class UnloadedTimingCollection
{
    public const string Name = "Unloaded timing";
}
