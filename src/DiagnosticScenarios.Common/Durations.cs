using System.Globalization;

namespace DiagnosticScenarios.Common;

/// <summary>
/// The one way the command lines read a duration: <c>500ms</c>, <c>10s</c>, <c>2m</c>, <c>1h</c>, <c>00:00:30</c>
/// (hours, minutes, seconds), or a plain number of seconds. The load runner and the diagnosis CLI both take it.
/// </summary>
public static class Durations
{
    /// <summary>The grammar in a few words, for an option's description and for the error.</summary>
    public const string Help = "500ms, 10s, 2m, 1h or 00:00:30; a plain number is seconds";

    private static readonly (string Suffix, double Seconds)[] Units = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)];

    /// <summary>Reads <paramref name="text"/>: false for anything else, for zero unless <paramref name="allowZero"/>, and for one too long to add to a clock.</summary>
    public static bool TryParse(string? text, out TimeSpan duration, bool allowZero = false)
    {
        duration = default;
        text = text?.Trim();
        if (string.IsNullOrEmpty(text))
        {
            return false;
        }

        if (text.Count(c => c == ':') == 2)
        {
            return TimeSpan.TryParse(text, CultureInfo.InvariantCulture, out duration) && IsAllowed(duration, allowZero);
        }

        // "ms" before "m" and "s": the first suffix that matches decides.
        var (number, scale) = Units.Where(u => text.EndsWith(u.Suffix, StringComparison.OrdinalIgnoreCase))
            .Select(u => (text[..^u.Suffix.Length], u.Seconds))
            .DefaultIfEmpty((text, 1))
            .First();
        if (!double.TryParse(number, NumberStyles.Float, CultureInfo.InvariantCulture, out var value)
            || !double.IsFinite(value) || value < 0 || value * scale > TimeSpan.MaxValue.TotalSeconds / 2)
        {
            return false;
        }

        duration = TimeSpan.FromSeconds(value * scale);
        return IsAllowed(duration, allowZero);
    }

    /// <summary>The error for a value <see cref="TryParse"/> refused.</summary>
    public static string NotADuration(string text, bool allowZero = false) =>
        $"Not a duration{(allowZero ? "" : " above zero")}: '{text}' ({Help}).";

    private static bool IsAllowed(TimeSpan duration, bool allowZero) => duration > TimeSpan.Zero || (allowZero && duration == TimeSpan.Zero);
}
