using DiagnosticScenarios.Common.Catalogue;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>How <c>compare</c> sends a catalogue scenario's requests.</summary>
public static class ScenarioRequests
{
    /// <summary>The URL of the scenario on a server, with the delay as a query parameter when one is given.</summary>
    public static Uri Url(this Scenario scenario, Uri baseAddress, int? delayMs)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        return new(baseAddress, scenario.Route.TrimStart('/') + (delayMs is { } ms ? FormattableString.Invariant($"?delayMs={ms}") : ""));
    }

    /// <summary>The load runner's options for the scenario at <paramref name="url"/>: its method and slow upload, if any.</summary>
    public static LoadOptions LoadOptions(this Scenario scenario, Uri url)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        return scenario.Load is { } load
            ? new LoadOptions { Url = url, Method = new HttpMethod(load.Method), BodyBytes = load.BodyBytes, UploadOver = TimeSpan.FromMilliseconds(load.UploadMs) }
            : new LoadOptions { Url = url };
    }
}
