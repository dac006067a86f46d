using System.Text.Json.Serialization;

namespace DiagnosticScenarios.Common.Catalogue;

/// <summary>One scenario of the catalogue, as <c>GET /api/scenarios</c> serves it and the load runner reads it.</summary>
/// <param name="Name">Unique within its family; what <c>compare --scenarios</c> takes.</param>
/// <param name="Route">The route template, as the OpenAPI document lists it.</param>
/// <param name="Family">The <see cref="ScenarioFamily.Name"/> it belongs to.</param>
/// <param name="Verdict">BAD, GOOD or baseline.</param>
/// <param name="Action">
/// The controller action that serves it (<c>Controller.Action</c>). The analyzer table finds the scenario's code from it:
/// the <c>// BAD:</c> lines in this method or, when it has none, in the nearest app methods it calls.
/// </param>
/// <param name="Pattern">The code shape, in one line.</param>
/// <param name="Why">Why it behaves as it does, in one line.</param>
/// <param name="Twin">For a BAD scenario measured against a GOOD one, that GOOD scenario's route; null otherwise.</param>
/// <param name="Defaults">
/// The values it runs with when a request names none, by query parameter (<c>delayMs</c>, <c>every</c>), and what it is
/// built with (<c>throttle</c>: how many requests it serves at once, 1 for a lock); null where the family's
/// <see cref="ScenarioFamily.DefaultDelayMs"/> says it all.
/// </param>
/// <param name="Load">How to load it when a plain GET is not how it is used (a POST with a slowly uploaded body); null for a GET.</param>
public sealed record Scenario(
    string Name,
    string Route,
    string Family,
    ScenarioVerdict Verdict,
    string Action,
    string Pattern,
    string Why,
    string? Twin = null,
    IReadOnlyDictionary<string, int>? Defaults = null,
    ScenarioLoad? Load = null)
{
    /// <summary>
    /// The analyzer rules (the app's <c>AnalyzerRules.All</c>) that flag the scenario's <c>// BAD:</c> line when turned
    /// on, suppressions ignored; empty when none does, and for GOOD and baseline scenarios, whose code none of them flags.
    /// </summary>
    public IReadOnlyList<string> FlaggedBy { get; init; } = [];

    /// <summary>
    /// What the runtime does about the scenario's blocking and what finds it, for a BAD scenario of a family the load tests
    /// measure; null otherwise. Each cell is measured by a load test on a Release build under 125 connections, which fails
    /// when it differs.
    /// </summary>
    public RuntimeView? Runtime { get; init; }
}

/// <summary>The runtime's view of a blocking scenario, as the load tests measure it from outside the process.</summary>
/// <param name="PoolCompensates">
/// The pool added threads for cooperative blocking during the load (runtime event 55, reason 8): only a Task wait
/// (<c>.Result</c>, <c>.Wait()</c>, <c>GetAwaiter().GetResult()</c>) tells the pool it blocks. Null where runs differ: a
/// scenario whose threads wait in a Task wait in some runs and in a synchronous socket read in others (<c>httpclient</c>),
/// or whose rare Task wait comes when hill climbing has left the pool's goal high enough or not (<c>intermittent</c>).
/// </param>
/// <param name="RaisesWaitHandleWait">
/// Some pool thread's WaitHandleWait events (.NET 9+) name the scenario's code or route: what <c>dotnet-trace --clrevents
/// waithandle</c> and the CLI's <c>waits</c> see. <c>Thread.Sleep</c> raises none.
/// </param>
/// <param name="SnapshotNamesIt">
/// A stack snapshot half-way through the load names the scenario's code or route at its top blocking site. Null where
/// snapshots differ: blocking that comes and goes (<c>intermittent</c>) has a thread parked at some moments only.
/// </param>
/// <param name="RuleDeclaresIt">
/// The starvation rule (the app's detector, <c>watch</c>, the alert) declares starvation over the runtime's counters of
/// the load. Blocking that comes and goes (<c>intermittent</c>) does not starve the pool, and the rule says so.
/// </param>
/// <param name="NamedToTheLine">
/// That snapshot's top site names the scenario's action and the line of its blocking call, in the Release build under
/// test, where ASP.NET Core's invoker, compiled optimized from its first request, inlines a small action; null where
/// snapshots differ.
/// </param>
public sealed record RuntimeView(bool? PoolCompensates, bool RaisesWaitHandleWait, bool? SnapshotNamesIt, bool RuleDeclaresIt, bool? NamedToTheLine);

/// <summary>How the load runner loads a scenario whose requests carry a body: what <c>run --method --body-bytes --upload-over</c> takes.</summary>
/// <param name="Method">The HTTP method, e.g. POST.</param>
/// <param name="BodyBytes">The size of each request's body.</param>
/// <param name="UploadMs">How long the client takes to send each body, in pieces spread over that time.</param>
public sealed record ScenarioLoad(string Method, int BodyBytes, int UploadMs);

/// <summary>Scenarios that share a route prefix and, for the query families, a default delay.</summary>
/// <param name="Name">What <c>compare --family</c> takes.</param>
/// <param name="RoutePrefix">Starts and ends with a slash.</param>
/// <param name="DefaultDelayMs">
/// The query's delay when a request names no <c>delayMs</c>; null when the family runs no query, or when each of its
/// scenarios has a default of its own (<see cref="Scenario.Defaults"/>).
/// </param>
/// <param name="Loadable">Whether the load control and <c>compare</c> may load its scenarios.</param>
public sealed record ScenarioFamily(string Name, string RoutePrefix, int? DefaultDelayMs, bool Loadable);

[JsonConverter(typeof(JsonStringEnumConverter<ScenarioVerdict>))]
public enum ScenarioVerdict
{
    [JsonStringEnumMemberName("BAD")]
    Bad,

    [JsonStringEnumMemberName("GOOD")]
    Good,

    [JsonStringEnumMemberName("baseline")]
    Baseline,
}
