namespace DiagnosticScenarios.Scenarios.Catalogue;

/// <summary>
/// The analyzer rules that look for blocking calls, whose verdict on each scenario the catalogue records in
/// <see cref="Common.Catalogue.Scenario.FlaggedBy"/>: the other packages' and this repository's. Each is counted as if
/// turned on, whatever its default.
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

    /// <summary>DiagnosticScenarios.Analyzers (this repository's package), a warning: a blocking call where requests run.</summary>
    public const string Dsb001 = "DSB001";

    /// <summary>DiagnosticScenarios.Analyzers, a warning: waiting on a task where requests run.</summary>
    public const string Dsb002 = "DSB002";

    /// <summary>DiagnosticScenarios.Analyzers, a warning: <c>Thread.Sleep</c> where requests run.</summary>
    public const string Dsb003 = "DSB003";

    /// <summary>DiagnosticScenarios.Analyzers, a warning: <c>BlockingCollection.Take</c> where requests run.</summary>
    public const string Dsb004 = "DSB004";

    /// <summary>DiagnosticScenarios.Analyzers, a warning: a lock held across a blocking call where requests run.</summary>
    public const string Dsb005 = "DSB005";

    /// <summary>DiagnosticScenarios.Analyzers, a warning: blocking work moved to <c>Task.Run</c> where requests run.</summary>
    public const string Dsb006 = "DSB006";

    /// <summary>DiagnosticScenarios.Analyzers, a warning: a wait on <c>Task.Run</c>, anywhere.</summary>
    public const string Dsb007 = "DSB007";

    /// <summary>DiagnosticScenarios.Analyzers, a warning: a wait inside a <c>ConcurrentDictionary</c> factory, anywhere.</summary>
    public const string Dsb008 = "DSB008";

    /// <summary>DiagnosticScenarios.Analyzers, a warning: a blocking timer callback, anywhere.</summary>
    public const string Dsb009 = "DSB009";

    /// <summary>The other packages' rules, in the order the analyzer table of docs/scenarios.md lists them, a column each.</summary>
    public static IReadOnlyList<string> All { get; } = [Vsthrd002, Vsthrd103, Ca1849, Ma0042, Ma0045, AsyncFixer02];

    /// <summary>This repository's package's rules, on in the app's build: the table's last column names those that flag a scenario.</summary>
    public static IReadOnlyList<string> ThisPackage { get; } = [Dsb001, Dsb002, Dsb003, Dsb004, Dsb005, Dsb006, Dsb007, Dsb008, Dsb009];
}
