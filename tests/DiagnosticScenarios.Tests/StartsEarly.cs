using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests;

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

/// <summary>xUnit's order of test collections (by id), with the classes marked <see cref="StartsEarlyAttribute"/> first.</summary>
public sealed class LongClassesFirst : ITestCollectionOrderer
{
    private const string ImplicitCollection = "Test collection for ";

    public IEnumerable<ITestCollection> OrderTestCollections(IEnumerable<ITestCollection> testCollections) =>
        testCollections.OrderBy(c => StartsEarly(c) ? 0 : 1).ThenBy(c => c.UniqueID);

    // A class's own collection is named after it; a shared collection (CollectionDefinition) is never early.
    private static bool StartsEarly(ITestCollection collection) =>
        collection.CollectionDefinition is null
        && collection.DisplayName.StartsWith(ImplicitCollection, StringComparison.Ordinal)
        && collection.TestAssembly.Assembly.GetType(collection.DisplayName[ImplicitCollection.Length..].Split(' ')[0]) is { } type
        && type.GetCustomAttributes(typeof(StartsEarlyAttribute).AssemblyQualifiedName).Any();
}
