using System.Net;
using System.Text.Json;
using DiagnosticScenarios.PoolHealth.Controls;
using DiagnosticScenarios.Tests.PoolHealth.LivePage;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.PoolHealth.StackCapture;

/// <summary>
/// Captures asked for at once on the app's port and on the live page's (where a capture is a long request, held within the
/// server's stream limit and let go when its client leaves) are still one capture: the second joins the first.
/// </summary>
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class CaptureOnBothPortsTests(ITestOutputHelper output)
{
    [Fact]
    public async Task CapturesAskedForAtOnceOnBothPorts_AreOneCapture()
    {
        await using var app = await HealthApp.StartAsync();
        using var kestrel = app.CreateControlClient();
        using var page = await app.LivePageClientAsync();
        page.DefaultRequestHeaders.Add(ControlGate.HeaderName, "1");

        var onTheApp = kestrel.PostAsync(new Uri("api/threadpool/stacks", UriKind.Relative), null);
        var onThePage = page.PostAsync(new Uri("api/threadpool/stacks", UriKind.Relative), null);
        using var appAnswer = await onTheApp.TimeoutAfter(TimeSpan.FromMinutes(1));
        using var pageAnswer = await onThePage.TimeoutAfter(TimeSpan.FromMinutes(1));
        var (appBody, pageBody) = (await appAnswer.Content.ReadAsStringAsync().DefaultTimeout(), await pageAnswer.Content.ReadAsStringAsync().DefaultTimeout());

        using var appCapture = JsonDocument.Parse(appBody);
        using var pageCapture = JsonDocument.Parse(pageBody);
        var (appAsked, pageAsked) = (appCapture.RootElement.GetProperty("requestedAt").GetString(), pageCapture.RootElement.GetProperty("requestedAt").GetString());
        output.WriteLine($"the app's port: {(int)appAnswer.StatusCode}, asked at {appAsked}; the page's port: {(int)pageAnswer.StatusCode}, asked at {pageAsked}");
        Assert.Equal(HttpStatusCode.OK, appAnswer.StatusCode);
        Assert.Equal(HttpStatusCode.OK, pageAnswer.StatusCode);
        Assert.Equal(appAsked, pageAsked);
    }
}
