using System.Net;
using DiagnosticScenarios.Controls;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace DiagnosticScenarios.Tests.Controls;

/// <summary>
/// In-memory requests carry no client address, so the control gate refuses them as it refuses any unknown client;
/// these helpers give them the loopback address a browser on the same machine has, and the page's control header.
/// </summary>
internal static class LoopbackClients
{
    public static WebApplicationFactory<Program> FromLoopback(this WebApplicationFactory<Program> factory) =>
        factory.WithWebHostBuilder(builder => builder.ConfigureServices(services =>
            services.AddSingleton<Microsoft.AspNetCore.Hosting.IStartupFilter, LoopbackAddressStartupFilter>()));

    /// <summary>A client that sends the control header, as the page does.</summary>
    public static HttpClient CreateControlClient(this WebApplicationFactory<Program> factory)
    {
        var client = factory.CreateClient();
        client.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");
        return client;
    }

    private sealed class LoopbackAddressStartupFilter : IStartupFilter
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
