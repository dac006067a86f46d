using System.Net;
using System.Text.Json;
using DiagnosticScenarios.PoolHealth.Controls;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.Controls;

/// <summary>Every control that changes the process answers only a loopback client, on a loopback Host, with a request a foreign page cannot send without a preflight.</summary>
public sealed class ControlGateTests(InProcessApp app, ITestOutputHelper output) : IClassFixture<InProcessApp>
{
    // The control the gate is tried on: DELETE resets the pool's minimum to the one the process started with, which it still
    // has here (the tests that change it run alone, after the parallel ones: ProcessWideStateCollection), so an answered
    // probe changes nothing the host shares.
    private const string Probe = "/api/threadpool/minthreads";
    private static readonly IPAddress Remote = IPAddress.Parse("192.0.2.10");
    private readonly InProcessApp _app = app.LogTo(output);

    public static TheoryData<string, string> Refusals() => new()
    {
        { "remote client", "loopback-client" },
        { "no client address", "loopback-client" },
        { "foreign Host", "loopback-host" },
        { "form post without the header", "preflight" },
        { "foreign Origin", "same-origin" },
        { "null Origin", "same-origin" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task Control_Answers403ProblemNamingTheRule_WhenARuleFails(string request, string rule)
    {
        // AllowedHosts widened, so the gate's own Host rule is what answers a foreign Host.
        await using var anyHost = _app.With(("AllowedHosts", "*"));

        var context = await anyHost.Server.SendAsync(c => Describe(c, request)).DefaultTimeout();

        var problem = await ReadProblemAsync(context, HttpStatusCode.Forbidden);
        Assert.Equal(rule, problem.GetProperty("rule").GetString());
        Assert.Contains("Controls:AllowRemoteClients", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Control_RefusesARemoteClient_InProductionToo()
    {
        // The fixture runs in Development, where the theory above refuses a remote client; Production reads its own settings.
        await using var production = _app.With(("environment", "Production"));
        Assert.Equal(Environments.Production, production.Services.GetRequiredService<IHostEnvironment>().EnvironmentName);

        var context = await production.Server.SendAsync(c => Describe(c, "remote client")).DefaultTimeout();

        var problem = await ReadProblemAsync(context, HttpStatusCode.Forbidden);
        Assert.Equal("loopback-client", problem.GetProperty("rule").GetString());
    }

    [Theory]
    [InlineData("control header")]
    [InlineData("JSON body")]
    [InlineData("same Origin")]
    public async Task Control_Answers_ALoopbackClientWithARequestThatNeedsAPreflight(string request)
    {
        var context = await _app.Server.SendAsync(c => Describe(c, request)).DefaultTimeout();

        Assert.Equal(StatusCodes.Status200OK, context.Response.StatusCode);
    }

    [Fact]
    public async Task Control_AnswersARemoteClient_OnlyWhenAllowRemoteClientsIsSet_AndStillWantsThePreflight()
    {
        await using var open = _app.With(("Controls:AllowRemoteClients", "true"));

        var withHeader = await open.Server.SendAsync(c => Describe(c, "remote client")).DefaultTimeout();
        var formPost = await open.Server.SendAsync(c =>
        {
            Describe(c, "form post without the header");
            InProcessApp.SetClientAddress(c, Remote);
        }).DefaultTimeout();

        Assert.Equal(StatusCodes.Status200OK, withHeader.Response.StatusCode);
        var problem = await ReadProblemAsync(formPost, HttpStatusCode.Forbidden);
        Assert.Equal("preflight", problem.GetProperty("rule").GetString());
    }

    [Fact]
    public async Task ForeignHost_Answers400ProblemNamingTheAllowedHostsRule_WithTheDefaultAllowedHosts()
    {
        var context = await _app.Server.SendAsync(c =>
        {
            Describe(c, "control header");
            c.Request.Host = new HostString("rebound.example");
        }).DefaultTimeout();

        var problem = await ReadProblemAsync(context, HttpStatusCode.BadRequest);
        Assert.Equal("allowed-hosts", problem.GetProperty("rule").GetString());
        Assert.Contains("rebound.example", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task StackCaptureRead_IsBehindTheGate_AsItShowsTheAppsInternals()
    {
        var remote = await _app.Server.SendAsync(c => ReadStacks(c, Remote)).DefaultTimeout();
        var local = await _app.Server.SendAsync(c => ReadStacks(c, IPAddress.Loopback)).DefaultTimeout();

        var problem = await ReadProblemAsync(remote, HttpStatusCode.Forbidden);
        Assert.Equal("loopback-client", problem.GetProperty("rule").GetString());
        // Let through, it answers what the endpoint itself says: no capture yet in a fresh app.
        Assert.Equal(StatusCodes.Status404NotFound, local.Response.StatusCode);
    }

    [Fact]
    public async Task EveryRouteThatChangesTheProcess_IsBehindTheGate()
    {
        var controls = _app.Services.GetRequiredService<EndpointDataSource>().Endpoints.OfType<RouteEndpoint>()
            .Where(e => e.RoutePattern.RawText?.StartsWith("/api/threadpool", StringComparison.Ordinal) == true)
            .SelectMany(e => (e.Metadata.GetMetadata<HttpMethodMetadata>()?.HttpMethods ?? []).Select(m => (Method: m, Route: e.RoutePattern.RawText!)))
            .Where(c => c.Method is not ("GET" or "HEAD"))
            .ToList();

        var answers = new List<string>();
        foreach (var (method, route) in controls)
        {
            var context = await _app.Server.SendAsync(c =>
            {
                c.Request.Method = method;
                c.Request.Path = route;
                InProcessApp.SetClientAddress(c, Remote);
                c.Request.Headers[ControlGate.HeaderName] = "1";
            }).DefaultTimeout();
            answers.Add($"{method} {route}: {context.Response.StatusCode}");
        }

        Assert.True(controls.Count >= 4, string.Join(", ", answers));
        Assert.All(answers, a => Assert.EndsWith(": 403", a, StringComparison.Ordinal));
    }

    private static void ReadStacks(HttpContext context, IPAddress client)
    {
        context.Request.Method = HttpMethods.Get;
        context.Request.Path = "/api/threadpool/stacks";
        context.Request.Host = new HostString("localhost");
        InProcessApp.SetClientAddress(context, client);
        context.Request.Headers[ControlGate.HeaderName] = "1";
    }

    private static void Describe(HttpContext context, string request)
    {
        context.Request.Method = HttpMethods.Delete;
        context.Request.Path = Probe;
        context.Request.Host = new HostString("localhost");
        InProcessApp.SetClientAddress(context, IPAddress.Loopback);
        context.Request.Headers[ControlGate.HeaderName] = "1";
        switch (request)
        {
            case "remote client":
                InProcessApp.SetClientAddress(context, Remote);
                break;
            case "no client address":
                InProcessApp.SetClientAddress(context, null);
                break;
            case "foreign Host":
                context.Request.Host = new HostString("rebound.example");
                break;
            case "form post without the header":
                context.Request.Headers.Remove(ControlGate.HeaderName);
                context.Request.ContentType = "application/x-www-form-urlencoded";
                break;
            case "JSON body":
                context.Request.Headers.Remove(ControlGate.HeaderName);
                context.Request.ContentType = "application/json";
                break;
            case "foreign Origin":
                context.Request.Headers.Origin = "http://attacker.example";
                break;
            case "null Origin":
                context.Request.Headers.Origin = "null";
                break;
            case "same Origin":
                context.Request.Headers.Origin = "http://localhost";
                break;
            case "control header":
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(request), request, null);
        }
    }

    private static async Task<JsonElement> ReadProblemAsync(HttpContext context, HttpStatusCode expected)
    {
        using var document = await JsonDocument.ParseAsync(context.Response.Body).DefaultTimeout();
        Assert.Equal((int)expected, context.Response.StatusCode);
        Assert.Equal("application/problem+json", context.Response.ContentType?.Split(';')[0]);
        return document.RootElement.Clone();
    }
}
