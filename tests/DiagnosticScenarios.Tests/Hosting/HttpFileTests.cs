using System.Text.Json;
using System.Text.RegularExpressions;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Hosting;

/// <summary>The .http file beside the app stays in step with the routes the app serves.</summary>
public sealed partial class HttpFileTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    [Fact]
    public async Task HttpFile_SendsARequestToEveryOperationInTheOpenApiDocument_ByMethodAndRoute()
    {
        using var client = _app.CreateClient();
        using var document = JsonDocument.Parse(await client.GetStringAsync(new Uri("/openapi/v1.json", UriKind.Relative)).DefaultTimeout());
        var httpFile = await File.ReadAllTextAsync(Path.Combine(RepositoryPaths.AppProject, "DiagnosticScenarios.http")).DefaultTimeout();
        var requested = RequestLine().Matches(httpFile).Select(m => (Method: m.Groups["method"].Value, Path: m.Groups["path"].Value)).ToList();

        // An operation is a method on a path: a PUT to a route does not stand for its DELETE.
        var operations = document.RootElement.GetProperty("paths").EnumerateObject()
            .SelectMany(p => p.Value.EnumerateObject().Where(o => HttpMethods.Contains(o.Name)).Select(o => (Method: o.Name.ToUpperInvariant(), Route: p.Name)))
            .ToList();
        var missing = operations
            .Where(operation => !requested.Any(r => r.Method == operation.Method && RouteTemplate(operation.Route).IsMatch(r.Path)))
            .Select(operation => $"{operation.Method} {operation.Route}")
            .ToList();

        Assert.True(missing.Count == 0, $"DiagnosticScenarios.http has no request for: {string.Join(", ", missing)}");
    }

    // A path item's keys that are operations (it may also hold parameters, a summary, servers).
    private static readonly HashSet<string> HttpMethods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

    private static Regex RouteTemplate(string route) =>
        new("^" + Regex.Replace(Regex.Escape(route), @"\\\{[^}]+}", "[^/?]+") + "(\\?.*)?$", RegexOptions.CultureInvariant);

    [GeneratedRegex(@"^(?<method>GET|PUT|POST|DELETE) \{\{host\}\}(?<path>\S+)", RegexOptions.Multiline)]
    private static partial Regex RequestLine();
}
