using System.Net;
using System.Text.Json;
using DiagnosticScenarios.Catalogue;
using DiagnosticScenarios.LoadRunner.Load;
using DiagnosticScenarios.Tests.ThreadPoolHealth;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Functional;

/// <summary>
/// The bodyread pair on a real Kestrel server, a body uploaded in pieces as its load sends it: both twins read it to its last
/// piece before they answer. The client cannot tell (HttpClient sends its body to the end before it returns, whatever the
/// server does), so the server's own time for each request, its attribution's, tells: it lasted the upload.
/// </summary>
public sealed class BodyReadTests(SweptServer fixture, ITestOutputHelper output) : IClassFixture<SweptServer>
{
    // The attribution records a request once the app has answered it, a moment after the client may have the answer.
    private static readonly TimeSpan ServerPatience = TimeSpan.FromSeconds(5);

    public static TheoryData<string> Uploaded => [.. ScenarioCatalogue.InFamily(ScenarioCatalogue.Blocking).Where(s => s.Load is not null).Select(s => s.Name)];

    [Theory]
    [MemberData(nameof(Uploaded))]
    public async Task BodyRead_ReadsASlowUploadToItsLastPiece_BeforeItAnswers(string name)
    {
        var scenario = CatalogueData.Find(ScenarioCatalogue.Blocking, name);
        var load = scenario.Load!;
        var upload = TimeSpan.FromMilliseconds(load.UploadMs);
        using var client = fixture.Server.CreateClient();

        using var request = new HttpRequestMessage(new HttpMethod(load.Method), new Uri(scenario.Route, UriKind.Relative))
        {
            Content = new SlowUploadContent(load.BodyBytes, upload),
        };
        using var response = await client.SendAsync(request).DefaultTimeout();
        Assert.Equal((HttpStatusCode.OK, $"success:blocking-{name}"), (response.StatusCode, await response.Content.ReadAsStringAsync().DefaultTimeout()));

        // The server's clock starts when the headers arrive, with the first piece: from then on it waits for the rest. Seen:
        // 190 and 213 ms for a 200 ms upload; about 10 ms for a twin that answered without reading.
        var waited = upload - SlowUploadContent.PieceInterval;
        var (read, figures) = await ThreadPoolApi.PollAsync(client, s => ServerMs(s, scenario) >= waited.TotalMilliseconds, ServerPatience, TimeSpan.FromMilliseconds(100));
        output.WriteLine($"{scenario.Route}: the server's longest request {ServerMs(figures, scenario)} ms, the upload {upload.TotalMilliseconds} ms");
        Assert.True(read, $"{scenario.Route}: the server's longest request took {ServerMs(figures, scenario)} ms, less than the {upload.TotalMilliseconds} ms upload after its first piece: it answered before reading the body.");
    }

    private static double? ServerMs(JsonElement threadPool, Scenario scenario) =>
        ThreadPoolApi.Endpoint(threadPool, scenario.Route)?.GetProperty("latency").GetProperty("maxMs").GetDouble();
}
