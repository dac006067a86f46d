using System.Globalization;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>Milliseconds as the reports print them: <c>532.6ms</c>, or <c>3.48s</c> from a second up.</summary>
internal static class Milliseconds
{
    public static string Format(double ms) => ms >= 1000
        ? string.Create(CultureInfo.InvariantCulture, $"{ms / 1000:0.00}s")
        : string.Create(CultureInfo.InvariantCulture, $"{ms:0.0}ms");
}
