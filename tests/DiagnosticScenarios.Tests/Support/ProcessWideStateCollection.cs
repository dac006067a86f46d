namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// Tests that change something the whole test host shares (the thread pool's minimum, a static count of leaked memory), or
/// compare readings of it (the meters, which a meter provider listens to by name in every app of the host). The collection
/// runs alone, after the parallel tests, so no other test sees the change while it lasts, or changes the reading.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ProcessWideStateCollection
{
    public const string Name = "Process-wide state";
}
