namespace DiagnosticScenarios.Scenarios.Catalogue;

/// <summary>
/// The analyzer rules that look for blocking calls, whose verdict on each scenario the catalogue records in
/// <see cref="Common.Catalogue.Scenario.FlaggedBy"/>. Each is counted as if turned on, whatever its default.
/// </summary>
public static class AnalyzerRules
{
    /// <summary>Microsoft.VisualStudio.Threading.Analyzers, a warning: <c>.Result</c>, <c>.Wait()</c>, <c>GetAwaiter().GetResult()</c> in synchronous code.</summary>
    public const string Vsthrd002 = "VSTHRD002";

    /// <summary>Microsoft.VisualStudio.Threading.Analyzers, a warning: inside an async method, a wait or a call that has an Async twin.</summary>
    public const string Vsthrd103 = "VSTHRD103";

    /// <summary>Microsoft.CodeAnalysis.NetAnalyzers, off by default: the same as <see cref="Vsthrd103"/>.</summary>
    public const string Ca1849 = "CA1849";

    /// <summary>Meziantou.Analyzer, info: a blocking call where the enclosing method or lambda can be async.</summary>
    public const string Ma0042 = "MA0042";

    /// <summary>Meziantou.Analyzer, off by default: a blocking call where the enclosing method or lambda would have to become async; silent in public, override and interface methods.</summary>
    public const string Ma0045 = "MA0045";

    /// <summary>AsyncFixer, a warning: inside an async method, a wait, <c>Thread.Sleep</c> or a call with an Async twin on a <c>System.*</c> type.</summary>
    public const string AsyncFixer02 = "AsyncFixer02";

    /// <summary>In the order the analyzer table of docs/scenarios.md lists them.</summary>
    public static IReadOnlyList<string> All { get; } = [Vsthrd002, Vsthrd103, Ca1849, Ma0042, Ma0045, AsyncFixer02];
}
