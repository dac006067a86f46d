using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// Every test that measures time under load. They run one at a time and never beside another test class: a measurement
/// of thread-pool starvation is only fair when nothing else competes for the machine's cores. Each class in it also
/// carries <c>[Trait("Category", "Load")]</c>, which <c>dotnet test --filter "Category!=Load"</c> leaves out. The observed
/// runs (<see cref="ObservedRuns"/>) are shared by the classes that read them.
/// </summary>
/// <remarks>
/// Classes that start servers and load them only for what they answer, never for how fast or for what a snapshot of the
/// moment shows (the load script and the page's load control on short light loads, the pool minimum a setting gives), or
/// that test the runner's own promises with margins a neighbour's load only widens or cannot close (an open loop's
/// backlog, a drain's cut, a report's format), carry the trait but not the collection: they run beside the functional
/// tests and take no time from the measurements. The think time is measured against back-to-back requests, whose rate a
/// neighbour's load cuts many times over: it stays.
/// A diagnosis of a loaded process is a measurement too: on two cores shared with the functional tests, a snapshot of a
/// fixture app can find none of its threads parked.
/// </remarks>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class LoadCollectionDefinition : ICollectionFixture<ObservedRuns>
{
    public const string Name = "Load";
}
