using System.Net;
using DiagnosticScenarios.PoolHealth.Controls;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// The app in the test host, as every in-process test class uses it: the automatic stack capture off (one blocking
/// request on the host's small pool is starvation to the detector, and a capture's CPU would land in other tests), the
/// live page's own server on a free port (test classes run side by side), in-memory requests given the loopback
/// address a browser on the same machine has, so the controls' gate judges them as it judges the page, and the app's
/// log in the output of the test that is running.
/// </summary>
/// <remarks>
/// A test class takes it as a class fixture and says where the log goes: <c>_app = app.LogTo(output)</c>. A class that
/// needs other settings for a test makes an app of its own with <see cref="With"/>.
/// </remarks>
public class InProcessApp : WebApplicationFactory<Program>
{
    /// <summary>
    /// A test-only request header for the client address the app sees: an address, or <c>none</c> for a request with no
    /// address at all. The fixture's own middleware reads it and removes it before the app runs.
    /// </summary>
    public const string ClientAddressHeader = "X-Test-Client-Address";

    private const string NoAddress = "none";

    private readonly IReadOnlyList<(string Key, string Value)> _settings;

    public InProcessApp()
        : this([])
    {
    }

    /// <summary>The app with <paramref name="settings"/> on top of the fixture's own, for a subclass with fixed settings.</summary>
    protected InProcessApp(IReadOnlyList<(string Key, string Value)> settings) => _settings = settings;

    /// <summary>Where the app's log goes: the running test's output. Set by each test class for its tests.</summary>
    public ITestOutputHelper? OutputHelper { get; set; }

    /// <summary>Sends the app's log to <paramref name="output"/> from now on, and answers the app.</summary>
    public InProcessApp LogTo(ITestOutputHelper output)
    {
        OutputHelper = output;
        return this;
    }

    /// <summary>
    /// Another app with these settings on top of this one's, e.g. <c>("ThreadPoolHealth:Enabled", "false")</c>, logging
    /// where this one logs. The caller disposes it.
    /// </summary>
    public InProcessApp With(params (string Key, string Value)[] settings) =>
        new([.. _settings, .. settings]) { OutputHelper = OutputHelper };

    /// <summary>A client that sends the control header, as the page does.</summary>
    public HttpClient CreateControlClient()
    {
        var client = CreateClient();
        client.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");
        return client;
    }

    /// <summary>A client whose requests come from <paramref name="address"/>, or from no address at all when it is null.</summary>
    public HttpClient CreateClientFrom(IPAddress? address)
    {
        var client = CreateClient();
        client.DefaultRequestHeaders.Add(ClientAddressHeader, address?.ToString() ?? NoAddress);
        return client;
    }

    /// <summary>Makes an in-memory request (<c>Server.SendAsync</c>) come from <paramref name="address"/>, or from no address when it is null.</summary>
    public static void SetClientAddress(HttpContext context, IPAddress? address)
    {
        ArgumentNullException.ThrowIfNull(context);
        context.Request.Headers[ClientAddressHeader] = address?.ToString() ?? NoAddress;
    }

    protected override void ConfigureWebHost(IWebHostBuilder builder)
    {
        builder.UseSetting("StackCapture:OnStarvation", "false");
        builder.UseSetting("LivePage:Port", "0");
        foreach (var (key, value) in _settings)
        {
            builder.UseSetting(key, value);
        }

        builder.ConfigureLogging(logging => logging.ClearProviders().AddProvider(new TestOutputLoggerProvider(this)));
        builder.ConfigureServices(services => services.AddSingleton<IStartupFilter, ClientAddress>());
    }

    // In-memory requests carry no client address: loopback, unless the test-only header names another (or none).
    private sealed class ClientAddress : IStartupFilter
    {
        public Action<IApplicationBuilder> Configure(Action<IApplicationBuilder> next) => app =>
        {
            app.Use((context, nextMiddleware) =>
            {
                var named = context.Request.Headers[ClientAddressHeader].ToString();
                context.Request.Headers.Remove(ClientAddressHeader);
                context.Connection.RemoteIpAddress = named switch
                {
                    "" => context.Connection.RemoteIpAddress ?? IPAddress.Loopback,
                    NoAddress => null,
                    _ => IPAddress.Parse(named),
                };
                return nextMiddleware(context);
            });
            next(app);
        };
    }
}
