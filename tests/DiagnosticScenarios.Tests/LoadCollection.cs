namespace DiagnosticScenarios.Tests;

/// <summary>Tests that load a server or drive a browser: they own the machine while they run, one at a time.</summary>
[CollectionDefinition("Load", DisableParallelization = true)]
#pragma warning disable CA1711 // deliberate: xunit's own name for a collection definition
public sealed class LoadCollection;
#pragma warning restore CA1711
