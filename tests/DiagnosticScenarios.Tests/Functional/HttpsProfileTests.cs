using System.Globalization;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using DiagnosticScenarios.Common;

namespace DiagnosticScenarios.Tests.Functional;

/// <summary>
/// `dotnet run --launch-profile https` serves https://localhost:5001 beside http://localhost:5000: the profile names its
/// addresses on the command line, which outranks the <c>Urls</c> of appsettings.json (its applicationUrl alone does not).
/// </summary>
public sealed class HttpsProfileTests : IDisposable
{
    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("diagnosticscenarios-https-");

    [Fact]
    public async Task HttpsProfile_ServesHttpsBesideHttp_ThoughAppsettingsNamesOnlyHttp()
    {
        var profileUrls = HttpsProfileUrls();
        // The dev certificate stands in as a self-signed one of the test's own, so the test touches no certificate store.
        var certificate = Path.Combine(_folder.FullName, "localhost.pfx");
        await File.WriteAllBytesAsync(certificate, SelfSignedLocalhost()).DefaultTimeout();
        // The profile's addresses on ports of the test's own: its http one is the harness's base address.
        var https = profileUrls.Where(u => u.Scheme == Uri.UriSchemeHttps).Select(_ => "https://127.0.0.1:0").ToList();

        await using var server = await OutOfProcessApp.StartAsync(o => o with
        {
            MoreUrls = https,
            ExtraEnvironment = new Dictionary<string, string> { ["Kestrel__Certificates__Default__Path"] = certificate, ["Kestrel__Certificates__Default__Password"] = "" },
        });
        using var handler = new HttpClientHandler { ServerCertificateCustomValidationCallback = HttpClientHandler.DangerousAcceptAnyServerCertificateValidator };
        using var client = new HttpClient(handler);
        var overHttps = await client.GetStringAsync(new Uri(server.MoreAddresses.Single(), "api/diagscenario/ping")).DefaultTimeout();
        var overHttp = await client.GetStringAsync(new Uri(server.BaseAddress, "api/diagscenario/ping")).DefaultTimeout();

        Assert.Contains(new Uri("https://localhost:5001"), profileUrls);
        Assert.Contains(new Uri("http://localhost:5000"), profileUrls);
        Assert.Equal("success:ping", overHttps);
        Assert.Equal("success:ping", overHttp);
    }

    public void Dispose() => _folder.Delete(recursive: true);

    // The https profile's --urls, from its commandLineArgs.
    private static List<Uri> HttpsProfileUrls()
    {
        using var settings = JsonDocument.Parse(File.ReadAllText(Path.Combine(RepositoryPaths.AppProject, "Properties", "launchSettings.json")));
        var arguments = settings.RootElement.GetProperty("profiles").GetProperty("https").GetProperty("commandLineArgs").GetString()!;
        var urls = arguments.Split("--urls", 2)[1].Trim().Trim('"');
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
