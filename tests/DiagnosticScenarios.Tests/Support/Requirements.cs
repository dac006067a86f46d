using System.Runtime.CompilerServices;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// What a test needs beyond the .NET SDK. Outside CI a missing dependency is a visible skip that names what to install;
/// under <c>CI=true</c> the test runs and fails instead, because CI must test it.
/// </summary>
internal static class Requirements
{
    public static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// Skips the test unless its dependency is here or CI runs it. The reason goes into the test's display name too: the
    /// console of a plain <c>dotnet test</c> lists skipped tests by name, and would not say why.
    /// </summary>
    public static void SkipUnless(FactAttribute test, bool available, string install, string method)
    {
        if (!available && !IsCi)
        {
            test.Skip = install;
            test.DisplayName = $"{method} [skipped: {install}]";
        }
    }

    /// <summary>The full path of a program on PATH, or null.</summary>
    public static string? OnPath(string program) =>
        (Environment.GetEnvironmentVariable("PATH") ?? string.Empty)
            .Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Select(directory => Path.Combine(directory, program))
            .FirstOrDefault(File.Exists);
}

/// <summary>The out-of-process load measurements: <c>dotnet test --filter "Category!=Load"</c> leaves them out.</summary>
internal static class TestCategory
{
    public const string Name = "Category";
    public const string Load = "Load";
}

/// <summary>A test that drives Debian's headless Chromium through chromium-driver.</summary>
public sealed class ChromiumFactAttribute : FactAttribute
{
    public const string Install = "needs chromium and chromedriver on PATH: apt-get install chromium chromium-driver";

    public ChromiumFactAttribute([CallerMemberName] string test = "") =>
        Requirements.SkipUnless(this, Chromium.Browser is not null && Chromium.Driver is not null, Install, test);
}

internal static class Chromium
{
    public static string? Browser => Requirements.OnPath("chromium");

    public static string? Driver => Requirements.OnPath("chromedriver");
}
