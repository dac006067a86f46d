using System.Reflection;
using System.Text.RegularExpressions;
using DiagnosticScenarios.BlockingAnalysis;
using DiagnosticScenarios.LoadRunner.Server;

namespace DiagnosticScenarios.Tests.BlockingAnalysis;

/// <summary>
/// The fixture apps under tests/fixtures, apps that are not this one (other namespaces, written as people write them),
/// built Debug and Release by the test project's build; and what their blocking code is, read from their sources.
/// </summary>
internal sealed record FixtureApp(string Name, string Configuration, string ReadyPath)
{
    private static readonly string Folder = typeof(FixtureApp).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "FixtureAppsFolder").Value!;

    public static FixtureApp ContosoOrders(string configuration) => new("Contoso.Orders", configuration, "healthz");

    public static FixtureApp FabrikamStock(string configuration) => new("Fabrikam.Stock", configuration, "");

    public bool IsRelease => Configuration == "Release";

    /// <summary>A fresh process of the app on two processors, its simulated I/O slow enough to catch its threads in it.</summary>
    public ServerOptions ServerOptions => new()
    {
        AppPath = Path.Combine(Folder, Name, "bin", Configuration, "net10.0", $"{Name}.dll"),
        ProcessorCount = 2,
        ReadyPath = ReadyPath,
        ExtraEnvironment = new Dictionary<string, string>
        {
            ["Database__LatencyMs"] = "400",
            ["Mail__LatencyMs"] = "400",
            ["Warehouse__ScanMs"] = "400",
        },
    };

    /// <summary>
    /// A call the app makes: the method (<c>Type.Method</c>; a lambda as the compiler names it) and the statement that makes
    /// it, found in the source after the declaration of the method (or of the method the lambda is in).
    /// </summary>
    public Call At(string file, string method, string statement)
    {
        var path = Path.Combine(Folder, Name, file);
        var lines = File.ReadAllLines(path);
        var declared = Regex.Match(method, "<([A-Za-z]+)>") is { Success: true } lambda ? lambda.Groups[1].Value : method.Split('.')[^1];
        var declaration = Array.FindIndex(lines, l => l.Contains($" {declared}(", StringComparison.Ordinal));
        var line = Array.FindIndex(lines, Math.Max(declaration, 0), l => l.Trim() == statement);
        Assert.True(line >= 0, $"{statement} is not in {path} after {declared}'s declaration");
        return new Call(method, Path.GetFileName(file), line + 1, statement);
    }
}

/// <summary>A line of a fixture's code and the method it is in (<c>*</c> stands for the numbers the compiler gives lambdas).</summary>
internal sealed record Call(string Method, string FileName, int Line, string Statement)
{
    /// <summary>
    /// The frame is this method and carries this line, with its text read from the source: the statement, or the part of
    /// it a sequence point spans (a lambda's body).
    /// </summary>
    public bool IsNamedBy(AppFrame frame) =>
        Regex.IsMatch(frame.Method, "^" + Regex.Escape(Method).Replace(@"\*", "[^.]*", StringComparison.Ordinal) + "$")
        && frame.Source is { Text: { Length: > 0 } text } source && source.FileName == FileName && source.Line == Line && Statement.Contains(text, StringComparison.Ordinal);

    public override string ToString() => $"{Method} at {FileName}:{Line} `{Statement}`";
}

/// <summary>
/// What a blocking request runs, innermost first: the blocking call, then each caller's call to it, up to the action.
/// Where the JIT inlined the inner methods, the innermost frame left is one of the callers, at its call.
/// </summary>
internal sealed record BlockingChain(string Route, BlockingKind Kind, IReadOnlyList<Call> Calls)
{
    public Uri Uri => new(Route, UriKind.Relative);

    /// <summary>
    /// A site names this chain: its innermost app frame is the blocking call's line, and its callers follow the chain (Debug
    /// keeps every frame); or, in a Release build, its innermost frame is one of the chain's calls, or the site says the JIT
    /// inlined the code and names the route from the requests its threads started.
    /// </summary>
    public bool IsNamedBy(BlockingSite site, bool release) =>
        IsNamedBy(site.AppFrames, site.InlinedInto, site.RequestsSeen?.Contains($"{Request} (", StringComparison.Ordinal) == true, release);

    /// <summary>A wait site names this chain as a blocking site does; its requests are the hosting events' own.</summary>
    public bool IsNamedBy(WaitSite site, bool release) =>
        IsNamedBy(site.AppFrames, site.InlinedInto, site.Requests.Any(r => r.Request == Request), release);

    private string Request => $"GET /{Route}";

    // routeSeen: the site's threads started a request of this chain's route, which an inlined site must name.
    private bool IsNamedBy(IReadOnlyList<AppFrame> appFrames, InlinedInvoker? inlinedInto, bool routeSeen, bool release)
    {
        if (appFrames.Count > 0)
        {
            return release
                ? Calls.Any(c => c.IsNamedBy(appFrames[0]))
                : appFrames.Count >= Calls.Count && Calls.Select((c, i) => c.IsNamedBy(appFrames[i])).All(named => named);
        }

        return release && inlinedInto is not null && routeSeen;
    }

    public override string ToString() => $"{Request}: {string.Join(" <- ", Calls)}";
}
