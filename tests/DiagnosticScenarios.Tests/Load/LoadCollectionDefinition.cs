using DiagnosticScenarios.Tests.Observed;

namespace DiagnosticScenarios.Tests.Load;

/// <summary>
/// Every load test. They run one at a time and never beside another test class: a measurement of thread-pool
/// starvation is only fair when nothing else competes for the machine's cores. Each class in it also carries
/// <c>[Trait("Category", "Load")]</c>, which <c>dotnet test --filter "Category!=Load"</c> leaves out. The observed runs
/// (<see cref="ObservedRuns"/>) are shared by the classes that read them.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class LoadCollectionDefinition : ICollectionFixture<ObservedRuns>
{
    public const string Name = "Load";
}
