namespace DiagnosticScenarios.Scenarios.Mock;

/// <summary>The object the memory tutorials allocate: about 100 bytes each with its id.</summary>
public sealed class Customer(string id)
{
    public string Id { get; } = id;
}
