using System.CommandLine.Parsing;
using System.Globalization;

namespace DiagnosticScenarios.LoadRunner.Cli;

/// <summary>Durations as the options take them: <c>500ms</c>, <c>10s</c>, <c>2m</c>, <c>1h</c>; a plain number is seconds.</summary>
internal static class Durations
{
    public const string Help = "500ms, 10s, 2m (a plain number is seconds)";

    public static TimeSpan? Parse(ArgumentResult result)
    {
        var text = result.Tokens.Single().Value;
        var (number, scale) = text switch
        {
            _ when text.EndsWith("ms", StringComparison.OrdinalIgnoreCase) => (text[..^2], 0.001),
            _ when text.EndsWith('s') || text.EndsWith('S') => (text[..^1], 1.0),
            _ when text.EndsWith('m') || text.EndsWith('M') => (text[..^1], 60.0),
            _ when text.EndsWith('h') || text.EndsWith('H') => (text[..^1], 3600.0),
            _ => (text, 1.0),
        };
        if (double.TryParse(number, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && value > 0 && value * scale <= TimeSpan.MaxValue.TotalSeconds / 2)
        {
            return TimeSpan.FromSeconds(value * scale);
        }

        result.AddError($"Not a duration: '{text}' ({Help}).");
        return null;
    }
}
