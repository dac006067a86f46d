using System.Net;
using DiagnosticScenarios.Security;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Microsoft.Extensions.Configuration;

namespace DiagnosticScenarios.Tests.Hosting;

/// <summary>
/// The built app started from another directory, as <c>dotnet src/DiagnosticScenarios/bin/Release/net10.0/DiagnosticScenarios.dll</c>
/// from the repository's root starts it: it read no <c>appsettings.json</c> and its live page's server had no page, since
/// ASP.NET Core looks for both in the current directory; and where no setting names the allowed hosts, the app served any.
/// </summary>
public sealed class StartedElsewhereTests : IDisposable
{
    private readonly DirectoryInfo _elsewhere = Directory.CreateTempSubdirectory("started-elsewhere-");

    [Fact]
    public async Task BuiltApp_StartedFromAnotherDirectory_ServesTheLivePage_AndReadsItsSettings()
    {
        await using var app = await OutOfProcessApp.StartAsync(o => o with { WorkingDirectory = _elsewhere.FullName });
        using var page = await app.LivePageClientAsync();
        using var client = app.CreateClient();

        using var html = await page.GetAsync(new Uri("/", UriKind.Relative)).DefaultTimeout();
        using var ping = await client.GetAsync(new Uri("api/diagscenario/ping", UriKind.Relative)).DefaultTimeout();

        var body = await html.Content.ReadAsStringAsync().DefaultTimeout();
        Assert.True(html.StatusCode == HttpStatusCode.OK && body.Contains("<canvas", StringComparison.Ordinal), $"the live page answered {(int)html.StatusCode}: {body}");
        Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
        // appsettings.json sets ASP.NET Core's own categories to Warning: without it, every request logs its endpoint.
        Assert.True(!app.Output.Contains("Executing endpoint", StringComparison.Ordinal), $"ASP.NET Core logged each request at Information, so appsettings.json was not read:\n{app.Output}");
    }

    [Fact]
    public void AllowedHosts_WithNoSetting_ServesThisMachinesLoopbackNamesOnly()
    {
        var hosts = new AllowedHosts(new ConfigurationBuilder().Build());

        Assert.Equal(AllowedHosts.Default, hosts.Configured);
        Assert.True(hosts.Allows("localhost:5000") && hosts.Allows("127.0.0.1:5002") && hosts.Allows("[::1]:5000"), hosts.Configured);
        Assert.False(hosts.Allows("rebound.example"), hosts.Configured);
    }

    public void Dispose() => _elsewhere.Delete(recursive: true);
}
