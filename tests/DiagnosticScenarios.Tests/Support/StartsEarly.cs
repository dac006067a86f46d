using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// A functional class whose tests take many seconds in all, most of them waiting (a browser, a Prometheus, a server of
/// its own): started before the others, it runs beside them instead of being the last the parallel phase waits for. Not a
/// class whose time is CPU: the Roslyn analysis of the app, started early, took the cores from the load runner's timed
/// loads beside it (LoadRunnerTests), and one of them missed its bound.
/// </summary>
[AttributeUsage(AttributeTargets.Class)]
public sealed class StartsEarlyAttribute(string why) : Attribute
{
    /// <summary>What the class waits for.</summary>
    public string Why { get; } = why;
}

/// <summary>
/// A functional class whose tests take several seconds in all, most of them its own CPU or its children's (processes it
/// starts and reads): started as soon as the classes marked <see cref="StartsEarlyAttribute"/> leave a slot, never among
/// the last, where it would run on alone while the cores it could share sit idle.
/// </summary>
[AttributeUsage(AttributeTargets.Class)]
public sealed class StartsNextAttribute(string why) : Attribute
{
    /// <summary>What the class spends its time on.</summary>
    public string Why { get; } = why;
}

/// <summary>
/// The order in which the parallel phase starts its test collections: the classes marked <see cref="StartsEarlyAttribute"/>,
/// then those marked <see cref="StartsNextAttribute"/>, then the rest; by name within each, so every run starts them in the
/// same order (xUnit's own order is by a collection's id, a new GUID in every run, so the phase's last class, and so its
/// end, would change from run to run).
/// </summary>
public sealed class LongClassesFirst : ITestCollectionOrderer
{
    private const string ImplicitCollection = "Test collection for ";

    public IEnumerable<ITestCollection> OrderTestCollections(IEnumerable<ITestCollection> testCollections) =>
        testCollections.OrderBy(Rank).ThenBy(c => c.DisplayName, StringComparer.Ordinal);

    private static int Rank(ITestCollection collection) =>
        IsMarked(collection, typeof(StartsEarlyAttribute)) ? 0 : IsMarked(collection, typeof(StartsNextAttribute)) ? 1 : 2;

    // A class's own collection is named after it; a shared collection (CollectionDefinition) is never ranked.
    private static bool IsMarked(ITestCollection collection, Type attribute) =>
        collection.CollectionDefinition is null
        && collection.DisplayName.StartsWith(ImplicitCollection, StringComparison.Ordinal)
        && collection.TestAssembly.Assembly.GetType(collection.DisplayName[ImplicitCollection.Length..].Split(' ')[0]) is { } type
        && type.GetCustomAttributes(attribute.AssemblyQualifiedName).Any();
}
