namespace DiagnosticScenarios.Common;

/// <summary>The bounds every scenario route and the load runner hold a request's parameters to, and the load they are shown under.</summary>
public static class ScenarioLimits
{
    /// <summary>The longest delay, in milliseconds, a request may ask a scenario's database, upstream or worker for: a minute.</summary>
    public const int MaxDelayMs = 60_000;

    /// <summary>The tutorial's load: 125 connections, the runner's default and the page's.</summary>
    public const int DefaultConnections = 125;
}
