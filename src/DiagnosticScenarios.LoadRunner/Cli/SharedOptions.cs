using System.CommandLine;
using System.CommandLine.Parsing;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;
using DiagnosticScenarios.LoadRunner.Load;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary>The options <c>run</c> and <c>compare</c> both take: how many clients, how long each waits, and when a request has timed out.</summary>
internal static class SharedOptions
{
    public static Option<int> Connections() =>
        new("--connections", "-c") { Description = "Concurrent connections.", DefaultValueFactory = _ => LoadOptions.DefaultConnections, CustomParser = r => OptionValues.WholeNumber(r, 1, 100_000) ?? 0 };

    public static Option<TimeSpan?> ThinkTime() =>
        new("--think-time") { Description = $"Closed loop: each client waits a random time up to this between an answer and its next request, as siege -d ({Durations.Help}).", CustomParser = PositiveDuration };

    public static Option<TimeSpan> Timeout() =>
        new("--timeout") { Description = $"A request unanswered after this counts as a timeout ({Durations.Help}).", CustomParser = r => PositiveDuration(r) ?? default, DefaultValueFactory = _ => LoadOptions.DefaultTimeout };

    // Every duration the runner takes is a time to load or to wait, so none may be zero.
    public static TimeSpan? PositiveDuration(ArgumentResult result) => OptionValues.Duration(result, allowZero: false);
}
