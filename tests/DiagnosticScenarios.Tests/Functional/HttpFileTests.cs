using System.Text.Json;
using System.Text.RegularExpressions;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Functional;

/// <summary>The .http file beside the app stays in step with the routes the app serves.</summary>
public sealed partial class HttpFileTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task HttpFile_SendsARequestToEveryRouteInTheOpenApiDocument()
    {
        using var client = _app.CreateClient();
        using var document = JsonDocument.Parse(await client.GetStringAsync(new Uri("/openapi/v1.json", UriKind.Relative)).DefaultTimeout());
        var httpFile = await File.ReadAllTextAsync(Path.Combine(RepositoryPaths.AppProject, "DiagnosticScenarios.http")).DefaultTimeout();
        var requested = RequestLine().Matches(httpFile).Select(m => m.Groups["path"].Value).ToList();

        var missing = document.RootElement.GetProperty("paths").EnumerateObject()
            .Select(p => p.Name)
            .Where(route => !requested.Any(path => RouteTemplate(route).IsMatch(path)))
            .ToList();

        Assert.True(missing.Count == 0, $"DiagnosticScenarios.http has no request for: {string.Join(", ", missing)}");
    }

    private static Regex RouteTemplate(string route) =>
        new("^" + Regex.Replace(Regex.Escape(route), @"\\\{[^}]+}", "[^/?]+") + "(\\?.*)?$", RegexOptions.CultureInvariant);

    [GeneratedRegex(@"^(GET|PUT|POST|DELETE) \{\{host\}\}(?<path>\S+)", RegexOptions.Multiline)]
    private static partial Regex RequestLine();
}
