using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;

namespace DiagnosticScenarios.Common.CommandLines;

/// <summary>
/// Custom parsers for the options both command lines take. A value they refuse is an error in the option's own words,
/// never the library's ("as expected type 'System.Nullable`1[System.Int32]'"), and the usage follows it.
/// </summary>
public static class OptionValues
{
    /// <summary>A duration of <see cref="Durations"/>' grammar; zero only when <paramref name="allowZero"/>.</summary>
    public static TimeSpan? Duration(ArgumentResult result, bool allowZero = false)
    {
        var text = Text(result);
        if (Durations.TryParse(text, out var duration, allowZero))
        {
            return duration;
        }

        result.AddError(Durations.NotADuration(text, allowZero));
        return null;
    }

    /// <summary>A whole number from <paramref name="min"/> to <paramref name="max"/>.</summary>
    public static int? WholeNumber(ArgumentResult result, int min, int max)
    {
        var text = Text(result);
        if (int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) && value >= min && value <= max)
        {
            return value;
        }

        var range = max == int.MaxValue ? FormattableString.Invariant($"of {min} or more") : FormattableString.Invariant($"from {min} to {max}");
        result.AddError($"{OptionName(result)} takes a whole number {range}, not '{text}'.");
        return null;
    }

    /// <summary>A finite number above zero.</summary>
    public static double? PositiveNumber(ArgumentResult result)
    {
        var text = Text(result);
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && value > 0 && double.IsFinite(value))
        {
            return value;
        }

        result.AddError($"{OptionName(result)} takes a positive number, not '{text}'.");
        return null;
    }

    /// <summary>The one value given; empty when there is none to read.</summary>
    public static string Text(ArgumentResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        return result.Tokens.Count == 1 ? result.Tokens[0].Value : "";
    }

    /// <summary>The option's name (<c>--connections</c>, also when <c>-c</c> was typed), or the argument's.</summary>
    public static string OptionName(ArgumentResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        return result.Parent is OptionResult option ? option.Option.Name : result.Argument.Name;
    }
}
