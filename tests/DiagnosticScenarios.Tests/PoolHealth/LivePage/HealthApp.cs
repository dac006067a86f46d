using System.Net.Http.Json;
using System.Text.Json;
using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.PoolHealth.Controls;

namespace DiagnosticScenarios.Tests.PoolHealth.LivePage;

/// <summary>
/// The app as the thread-pool health tests need it: a process of its own (two processors, a fresh pool), in
/// Development with the project folder as content root so the live page is served, and one log line per entry.
/// </summary>
internal static class HealthApp
{
    /// <param name="environment">More environment variables for the server, over the ones set here.</param>
    public static Task<ServerProcess> StartAsync(IReadOnlyDictionary<string, string>? environment = null)
    {
        var variables = new Dictionary<string, string>
        {
            ["Logging__Console__FormatterName"] = "simple",
            ["Logging__Console__FormatterOptions__SingleLine"] = "true",
        };
        foreach (var (key, value) in environment ?? new Dictionary<string, string>())
        {
            variables[key] = value;
        }

        return OutOfProcessApp.StartAsync(o => o with
        {
            ContentRoot = RepositoryPaths.AppProject,
            Environment = "Development",
            ExtraEnvironment = variables,
        });
    }

    /// <summary>Where the live page's server listens (off the pool: it serves the snapshot and the scrape while the pool starves).</summary>
    public static async Task<Uri> LivePageAsync(this ServerProcess app)
    {
        using var client = app.CreateClient();
        var page = await client.GetFromJsonAsync<JsonElement>(new Uri("api/threadpool/page", UriKind.Relative)).DefaultTimeout();
        return new Uri(page.GetProperty("livePage").GetString() ?? throw new InvalidOperationException($"The live page is not listening: {page}\n{app.Output}"));
    }

    /// <summary>A client of the live page's server, where the snapshot and the scrape are.</summary>
    public static async Task<HttpClient> LivePageClientAsync(this ServerProcess app) =>
        new() { BaseAddress = await app.LivePageAsync(), Timeout = TimeoutExtensions.Default };

    public static HttpClient CreateClient(this ServerProcess app) => new() { BaseAddress = app.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };

    /// <summary>A client of the app that sends the control header, as the page does.</summary>
    public static HttpClient CreateControlClient(this ServerProcess app)
    {
        var client = app.CreateClient();
        client.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");
        return client;
    }
}
