using System.Net;
using DiagnosticScenarios.Controls;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace DiagnosticScenarios.Tests;

/// <summary>
/// The app in the test host, as every in-process test class uses it: the automatic stack capture off (one blocking
/// request on the host's small pool is starvation to the detector, and a capture's CPU would land in other tests), the
/// live page's own server on a free port (test classes run side by side), and in-memory requests given the loopback
/// address a browser on the same machine has, so the controls' gate judges them as it judges the page.
/// </summary>
public class InProcessApp : WebApplicationFactory<Program>
{
    /// <summary>A client that sends the control header, as the page does.</summary>
    public HttpClient CreateControlClient()
    {
        var client = CreateClient();
        client.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");
        return client;
    }

    /// <summary>The same app with more settings, e.g. <c>("ThreadPoolHealth:Enabled", "false")</c>.</summary>
    public WebApplicationFactory<Program> With(params (string Key, string Value)[] settings) =>
        WithWebHostBuilder(builder =>
        {
            foreach (var (key, value) in settings)
            {
                builder.UseSetting(key, value);
            }
        });

    protected override void ConfigureWebHost(IWebHostBuilder builder)
    {
        builder.UseSetting("StackCapture:OnStarvation", "false");
        builder.UseSetting("LivePage:Port", "0");
        builder.ConfigureServices(services => services.AddSingleton<IStartupFilter, LoopbackAddress>());
    }

    // In-memory requests carry no client address; a test that needs another one sets it before this runs.
    private sealed class LoopbackAddress : IStartupFilter
    {
        public Action<IApplicationBuilder> Configure(Action<IApplicationBuilder> next) => app =>
        {
            app.Use((context, nextMiddleware) =>
            {
                context.Connection.RemoteIpAddress ??= IPAddress.Loopback;
                return nextMiddleware(context);
            });
            next(app);
        };
    }
}
