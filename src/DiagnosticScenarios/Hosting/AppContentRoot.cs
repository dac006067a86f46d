namespace DiagnosticScenarios.Hosting;

/// <summary>
/// Where the app reads its <c>appsettings.json</c> and serves the live page from. ASP.NET Core takes the current directory,
/// which <c>dotnet run</c> makes the project's and the load runner makes the app's folder; the built app started from
/// anywhere else (<c>dotnet src/DiagnosticScenarios/bin/Release/net10.0/DiagnosticScenarios.dll</c> from the repository's
/// root) would read no settings and serve no page. Then the app's own folder, where the build puts both.
/// </summary>
public static class AppContentRoot
{
    private const string Settings = "appsettings.json";

    /// <summary>
    /// The app's folder when the current directory holds no <c>appsettings.json</c> and none was named; null to keep
    /// ASP.NET Core's choice (a <c>--contentRoot</c> argument, <c>ASPNETCORE_CONTENTROOT</c>, or the current directory).
    /// </summary>
    public static string? For(string[] args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var named = args.Any(a => a.TrimStart('-', '/').StartsWith("contentRoot", StringComparison.OrdinalIgnoreCase))
            || !string.IsNullOrEmpty(Environment.GetEnvironmentVariable("ASPNETCORE_CONTENTROOT"))
            || !string.IsNullOrEmpty(Environment.GetEnvironmentVariable("DOTNET_CONTENTROOT"));
        if (named || File.Exists(Path.Combine(Directory.GetCurrentDirectory(), Settings)))
        {
            return null;
        }

        return File.Exists(Path.Combine(AppContext.BaseDirectory, Settings)) ? AppContext.BaseDirectory : null;
    }
}
