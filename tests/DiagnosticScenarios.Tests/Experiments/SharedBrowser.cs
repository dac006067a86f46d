using System.Text.Json;
using OpenQA.Selenium.Chrome;

namespace DiagnosticScenarios.Tests.Experiments;

/// <summary>
/// Debian's headless Chromium, driven by chromium-driver, started once for the observed runs and the page's own tests:
/// a high-DPI screen (two device pixels per CSS pixel, as a projector or a laptop's display has) and a download folder
/// of its own, so a saved PNG lands where a test can read it. One page at a time.
/// </summary>
internal sealed class SharedBrowser : IDisposable
{
    /// <summary>The screen's device pixels per CSS pixel.</summary>
    public const double PixelRatio = 2;

    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    private readonly DirectoryInfo _profile;

    private SharedBrowser(ChromeDriver driver, DirectoryInfo profile, DirectoryInfo downloads)
    {
        Driver = driver;
        _profile = profile;
        Downloads = downloads;
    }

    public static bool Available => Chromium.Browser is not null && Chromium.Driver is not null;

    public ChromeDriver Driver { get; }

    /// <summary>Where the browser saves downloads.</summary>
    public DirectoryInfo Downloads { get; }

    /// <summary>A folder for a person to look at after the run: each run's charts as the page exported them.</summary>
    public static string Artifacts { get; } = Directory.CreateDirectory(Path.Combine(AppContext.BaseDirectory, "artifacts")).FullName;

    public static SharedBrowser Start()
    {
        var chromium = Chromium.Browser ?? throw new InvalidOperationException(ChromiumFactAttribute.Install);
        var chromeDriver = Chromium.Driver ?? throw new InvalidOperationException(ChromiumFactAttribute.Install);
        var profile = Directory.CreateTempSubdirectory("diagnosticscenarios-chromium-");
        var downloads = Directory.CreateTempSubdirectory("diagnosticscenarios-downloads-");
        var options = new ChromeOptions { BinaryLocation = chromium };
        options.AddArguments(
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            // A tab in the background is not slowed: the page served through the app is measured in one, beside the live page.
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
            "--window-size=1280,1600", $"--force-device-scale-factor={PixelRatio}", $"--user-data-dir={profile.FullName}");
        options.AddUserProfilePreference("download.default_directory", downloads.FullName);
        options.AddUserProfilePreference("download.prompt_for_download", false);
        var service = ChromeDriverService.CreateDefaultService(Path.GetDirectoryName(chromeDriver)!, Path.GetFileName(chromeDriver));
        service.HideCommandPromptWindow = true;
        var driver = new ChromeDriver(service, options, TimeSpan.FromSeconds(60));
        driver.ExecuteCdpCommand("Browser.setDownloadBehavior", new Dictionary<string, object?> { ["behavior"] = "allow", ["downloadPath"] = downloads.FullName });
        return new SharedBrowser(driver, profile, downloads);
    }

    /// <summary>Evaluates a JavaScript expression in the page and reads its value as JSON.</summary>
    public T Read<T>(string expression) =>
        JsonSerializer.Deserialize<T>((string)Driver.ExecuteScript($"return JSON.stringify({expression});")!, Json)!;

    /// <summary>
    /// Runs <paramref name="source"/> in every page loaded while <paramref name="run"/> runs, before the page's own
    /// scripts (to hold back or watch what the page fetches), and no longer once it returns.
    /// </summary>
    public T WithScriptBeforeEachPage<T>(string source, Func<T> run)
    {
        var script = (Dictionary<string, object?>)Driver.ExecuteCdpCommand("Page.addScriptToEvaluateOnNewDocument", new Dictionary<string, object?> { ["source"] = source })!;
        try
        {
            return run();
        }
        finally
        {
            Driver.ExecuteCdpCommand("Page.removeScriptToEvaluateOnNewDocument", new Dictionary<string, object?> { ["identifier"] = script["identifier"] });
        }
    }

    /// <summary>
    /// Waits for a condition the page must reach, polling; the message names what never came and, given
    /// <paramref name="seen"/>, what the page showed instead.
    /// </summary>
    public static void WaitUntil(Func<bool> condition, TimeSpan patience, string what, Func<string>? seen = null)
    {
        if (!Poll.Until(condition, patience))
        {
            throw new TimeoutException($"The page did not {what} within {patience.TotalSeconds:0} s.{(seen is null ? "" : $" It showed: {seen()}")}");
        }
    }

    public void Dispose()
    {
        Driver.Quit();
        Driver.Dispose();
        _profile.Delete(recursive: true);
        Downloads.Delete(recursive: true);
    }
}
