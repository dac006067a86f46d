using System.Net;
using DiagnosticScenarios.PoolHealth.LivePage;
using DiagnosticScenarios.Problems;
using DiagnosticScenarios.Scenarios.Catalogue;
using Microsoft.Extensions.DependencyInjection;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Problems;

/// <summary>Bad input gets a 4xx ProblemDetails that names the parameter and its range, never a 500 or a hang.</summary>
public sealed class BadInputTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    private readonly InProcessApp _app = app.LogTo(output);

    public static TheoryData<string, string, string> OutOfRangeOrMalformed()
    {
        var data = new TheoryData<string, string, string>();
        var queryShapes = CatalogueData.Shapes(ScenarioCatalogue.Mock).Select(s => $"/api/diagscenario/{s}")
            .Concat(CatalogueData.Shapes(ScenarioCatalogue.Sql).Select(s => $"/api/sqlscenario/{s}"));
        foreach (var route in queryShapes)
        {
            data.Add($"{route}?delayMs=abc", "delayMs", "0 to 60000");
            data.Add($"{route}?delayMs=-1", "delayMs", "0 to 60000");
            data.Add($"{route}?delayMs=60001", "delayMs", "0 to 60000");
            data.Add($"{route}?delayMs=99999999999", "delayMs", "0 to 60000");
            data.Add($"{route}?delayMs=1.5", "delayMs", "0 to 60000");
            data.Add($"{route}?delayMs=0x10", "delayMs", "0 to 60000");
            data.Add($"{route}?delayMs=%2B5", "delayMs", "0 to 60000");
        }

        data.Add("/api/diagscenario/taskburst?count=0", "count", "1 to 10000");
        data.Add("/api/diagscenario/taskburst?count=10001", "count", "1 to 10000");
        data.Add("/api/diagscenario/taskburst?count=many", "count", "1 to 10000");
        data.Add("/api/diagscenario/taskburst?mode=sometimes", "mode", "blocking, async");
        data.Add("/api/diagscenario/taskburst?mode=7", "mode", "blocking, async");
        data.Add("/api/diagscenario/taskburst?mode=1", "mode", "blocking, async");
        data.Add("/api/diagscenario/taskburst?mode=async,blocking", "mode", "blocking, async");
        data.Add("/api/diagscenario/taskburst?delayMs=-5", "delayMs", "0 to 60000");
        data.Add("/api/diagscenario/highcpu/0", "milliseconds", "1 to 60000");
        data.Add("/api/diagscenario/highcpu/60001", "milliseconds", "1 to 60000");
        data.Add("/api/diagscenario/highcpu/fast", "milliseconds", "1 to 60000");
        data.Add("/api/diagscenario/memspike/0", "seconds", "1 to 300");
        data.Add("/api/diagscenario/memspike/301", "seconds", "1 to 300");
        data.Add("/api/diagscenario/memleak/0", "kb", "1 to 1000000");
        data.Add("/api/diagscenario/memleak/1000001", "kb", "1 to 1000000");
        data.Add("/api/diagscenario/memleak/-3", "kb", "1 to 1000000");
        return data;
    }

    [Theory]
    [MemberData(nameof(OutOfRangeOrMalformed))]
    public async Task Parameter_Answers400ProblemNamingParameterAndRange_WhenOutOfRangeOrMalformed(string path, string parameter, string range)
    {
        using var client = _app.CreateClient();

        using var response = await client.GetAsync(new Uri(path, UriKind.Relative)).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.BadRequest);
        var errors = problem.GetProperty("errors");
        Assert.True(errors.TryGetProperty(parameter, out var messages), $"No error for '{parameter}' in {problem}");
        Assert.Contains(range, messages[0].GetString(), StringComparison.Ordinal);
        Assert.Contains(range, problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task InvalidParameter_IsOneShapeOfProblem_WhereverItIsRefused()
    {
        using var client = _app.CreateControlClient();
        using var livePage = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{_app.Services.GetRequiredService<LivePageServer>().Port}/") };
        (string Source, HttpClient Client, HttpMethod Method, string Path, string Parameter)[] sources =
        [
            ("model binding", client, HttpMethod.Get, "/api/diagscenario/taskwait?delayMs=abc", "delayMs"),
            ("the input rules", client, HttpMethod.Get, "/api/diagscenario/taskwait?delayMs=", "delayMs"),
            ("a control", client, HttpMethod.Put, "/api/threadpool/minthreads?workers=abc", "workers"),
            ("the stream", client, HttpMethod.Get, "/api/threadpool/stream?after=x", "after"),
            ("the live page's own server", livePage, HttpMethod.Get, "/api/threadpool/stream?after=x", "after"),
        ];

        var shapes = new List<(string Source, string Names)>();
        foreach (var (source, sender, method, path, parameter) in sources)
        {
            using var request = new HttpRequestMessage(method, new Uri(path, UriKind.Relative));
            using var response = await sender.SendAsync(request).DefaultTimeout();
            var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.BadRequest);
            output.WriteLine($"{source}: {problem}");

            var errors = problem.GetProperty("errors").EnumerateObject().ToList();
            Assert.Equal(parameter, Assert.Single(errors).Name);
            Assert.Equal(errors[0].Value[0].GetString(), problem.GetProperty("detail").GetString());
            Assert.Equal(path.Split('?')[0], problem.GetProperty("instance").GetString());
            Assert.Equal(ProblemTitles.InvalidParameters, problem.GetProperty("title").GetString());
            shapes.Add((source, string.Join(", ", problem.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal))));
        }

        // The app's own answers carry ASP.NET Core's type and trace id; the live page's server, which is not ASP.NET Core's, neither.
        var appShape = shapes[0].Names;
        Assert.All(shapes.SkipLast(1), s => Assert.True(s.Names == appShape, $"{s.Source}: {s.Names}; model binding: {appShape}"));
        Assert.Equal(string.Join(", ", appShape.Split(", ").Except(["traceId", "type"])), shapes[^1].Names);
    }

    [Theory]
    [InlineData("GET", "/api/nothing/here", HttpStatusCode.NotFound)]
    [InlineData("POST", "/api/diagscenario/taskwait", HttpStatusCode.MethodNotAllowed)]
    [InlineData("GET", "/api/diagscenario/taskwait?delayMs=abc", HttpStatusCode.BadRequest)]
    [InlineData("GET", "/api/threadpool/stacks", HttpStatusCode.NotFound)]
    [InlineData("GET", "/api/diagscenario/exception", HttpStatusCode.InternalServerError)]
    public async Task EveryProblemTheAppWrites_GoesThroughItsProblemDetailsService_WithTypeInstanceAndTraceId(string method, string path, HttpStatusCode status)
    {
        // Every one, the stacks' 404 too (no capture yet, in an app whose automatic capture is off), not plain JSON without them.
        using var client = _app.CreateControlClient();
        using var request = new HttpRequestMessage(new HttpMethod(method), new Uri(path, UriKind.Relative));

        using var response = await client.SendAsync(request).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, status);
        Assert.StartsWith("https://tools.ietf.org/html/rfc9110#section-15.", problem.GetProperty("type").GetString(), StringComparison.Ordinal);
        Assert.Equal(path.Split('?')[0], problem.GetProperty("instance").GetString());
        Assert.False(string.IsNullOrEmpty(problem.GetProperty("traceId").GetString()), problem.ToString());
    }

    [Theory]
    [InlineData("/api/diagscenario/nosuchscenario")]
    [InlineData("/api/diagscenario/highcpu")]
    [InlineData("/api/diagscenario/memleak/")]
    [InlineData("/api/nothing/here")]
    public async Task UnknownOrIncompleteRoute_Answers404Problem(string path)
    {
        using var client = _app.CreateClient();

        using var response = await client.GetAsync(new Uri(path, UriKind.Relative)).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.NotFound);
        Assert.Contains("/swagger", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("POST", "/api/diagscenario/taskwait")]
    [InlineData("PUT", "/api/diagscenario/ping")]
    [InlineData("DELETE", "/api/diagscenario/taskasyncwait")]
    public async Task WrongMethod_Answers405ProblemNamingTheAllowedMethod(string method, string path)
    {
        using var client = _app.CreateClient();
        using var request = new HttpRequestMessage(new HttpMethod(method), new Uri(path, UriKind.Relative));

        using var response = await client.SendAsync(request).DefaultTimeout();

        var problem = await ProblemDetailsAssert.IsProblemAsync(response, HttpStatusCode.MethodNotAllowed);
        Assert.Contains("GET", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }
}
