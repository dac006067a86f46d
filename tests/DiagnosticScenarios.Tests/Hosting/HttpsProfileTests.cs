using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.Hosting;

/// <summary>
/// `dotnet run --launch-profile https` serves https://localhost:5001 beside http://localhost:5000: dotnet run hands the
/// profile's applicationUrl to the app as ASPNETCORE_URLS. The app had named its address in appsettings.json too, which
/// outranks that variable, so the profile (and ASPNETCORE_URLS set by hand, or a container's) served http://localhost:5000 only.
/// </summary>
public sealed class HttpsProfileTests : IDisposable
{
    private static readonly TimeSpan Start = TimeSpan.FromSeconds(60);
    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("diagnosticscenarios-https-");

    [Fact]
    public async Task HttpsProfile_ServesHttpsBesideHttp_FromTheApplicationUrlDotnetRunPassesAsAspNetCoreUrls()
    {
        var profileUrls = HttpsProfileUrls();
        // The dev certificate stands in as a self-signed one of the test's own, so the test touches no certificate store.
        var certificate = Path.Combine(_folder.FullName, "localhost.pfx");
        await File.WriteAllBytesAsync(certificate, SelfSignedLocalhost()).DefaultTimeout();
        // The profile's addresses, each on a port of the test's own.
        var urls = profileUrls.Select(u => new UriBuilder(u) { Host = "127.0.0.1", Port = FreeLoopbackPort.Pick() }.Uri).ToList();

        await using var app = ChildProcess.Start(new ChildProcessStart("dotnet", [LoadExperiment.AppPath])
        {
            TimeLimit = Start + TimeSpan.FromSeconds(30),
            Environment = new Dictionary<string, string?>
            {
                ["ASPNETCORE_URLS"] = string.Join(';', urls.Select(u => u.GetLeftPart(UriPartial.Authority))),
                ["LivePage__Port"] = "0",
                ["Kestrel__Certificates__Default__Path"] = certificate,
                ["Kestrel__Certificates__Default__Password"] = "",
            },
        });
        using var handler = new HttpClientHandler { ServerCertificateCustomValidationCallback = HttpClientHandler.DangerousAcceptAnyServerCertificateValidator };
        using var client = new HttpClient(handler) { Timeout = TimeSpan.FromSeconds(5) };
        foreach (var url in urls)
        {
            var (answered, last) = await Poll.UntilAsync(() => PingAsync(client, url), a => a == "success:ping", Start);
            Assert.True(answered, $"{url} answered {last}\n{app.Output}");
        }

        Assert.Contains(new Uri("https://localhost:5001"), profileUrls);
        Assert.Contains(new Uri("http://localhost:5000"), profileUrls);
    }

    public void Dispose() => _folder.Delete(recursive: true);

    private static async Task<string> PingAsync(HttpClient client, Uri url)
    {
        try
        {
            return await client.GetStringAsync(new Uri(url, "api/diagscenario/ping"));
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
        {
            return e.Message;
        }
    }

    // The https profile's applicationUrl, which dotnet run passes to the app as ASPNETCORE_URLS.
    private static List<Uri> HttpsProfileUrls()
    {
        using var settings = JsonDocument.Parse(File.ReadAllText(Path.Combine(RepositoryPaths.AppProject, "Properties", "launchSettings.json")));
        var urls = settings.RootElement.GetProperty("profiles").GetProperty("https").GetProperty("applicationUrl").GetString()!;
        return [.. urls.Split(';').Select(u => new Uri(u))];
    }

    private static byte[] SelfSignedLocalhost()
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(System.Net.IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        return certificate.Export(X509ContentType.Pfx, string.Empty);
    }
}
