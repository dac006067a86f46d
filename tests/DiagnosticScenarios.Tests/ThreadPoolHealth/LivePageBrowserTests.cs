using System.Diagnostics;
using System.Globalization;
using DiagnosticScenarios.Tests.Load;
using OpenQA.Selenium;
using OpenQA.Selenium.Chrome;
using OpenQA.Selenium.Support.UI;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.ThreadPoolHealth;

/// <summary>
/// The live page in Debian's headless Chromium, driven by chromium-driver. The app runs in its own process,
/// so the load the page starts (through the runner, a third process) starves that server and not this test.
/// </summary>
[Collection(LoadCollectionDefinition.Name)]
[Trait(TestCategory.Name, TestCategory.Load)]
public sealed class LivePageBrowserTests(ITestOutputHelper output)
{
    [ChromiumFact]
    public async Task LivePage_ShowsThreadsRisingAndQueueDelayOverThreshold_WhenLoadingTaskWait()
    {
        var clock = Stopwatch.StartNew();
        await using var app = await HealthApp.StartAsync();
        var profile = Directory.CreateTempSubdirectory("diagnosticscenarios-chromium-");
        using var driver = StartChromium(profile.FullName);
        var wait = new WebDriverWait(driver, TimeSpan.FromSeconds(30)) { PollingInterval = TimeSpan.FromMilliseconds(250) };
        try
        {
            // Arrange: the page is up and its charts are being fed.
            await driver.Navigate().GoToUrlAsync(app.BaseAddress.ToString()).WaitAsync(TimeSpan.FromSeconds(30));
            wait.Until(d => Number(d, "samples") >= 3);
            var idleThreads = Number(driver, "peakThreads");
            var drawnPixels = Convert.ToInt64(((IJavaScriptExecutor)driver).ExecuteScript(
                "const c = document.getElementById('chart-threads'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;" +
                "let n = 0; for (let i = 3; i < d.length; i += 4) { if (d[i] > 0) n++; } return n;"), CultureInfo.InvariantCulture);

            // Act: start a load on taskwait from the page.
            driver.FindElement(By.Id("load-scenario")).SendKeys("diagscenario/taskwait");
            // The page's figures reach it through the starved server: a sample waits behind the requests queued before it,
            // so forty connections show the rise 2.6 to 3.1 s after the load starts (three runs), where 125 took 9 to 13 s.
            SetValue(driver, "load-connections", "40");
            SetValue(driver, "load-duration", "40");
            driver.FindElement(By.Id("load-start")).Click();
            Assert.Equal("diagscenario/taskwait", driver.FindElement(By.Id("load-scenario")).GetDomProperty("value"));
            wait.Until(d => d.FindElement(By.Id("load-status")).Text.StartsWith("202", StringComparison.Ordinal));
            var loadStartedAt = clock.Elapsed;
            var threshold = Number(driver, "thresholdMs");
            TimeSpan? threadsRoseAt = null;
            TimeSpan? delayCrossedAt = null;
            var starvedWait = new WebDriverWait(driver, TimeSpan.FromSeconds(60)) { PollingInterval = TimeSpan.FromMilliseconds(500) };
            try
            {
                starvedWait.Until(d =>
                {
                    threadsRoseAt ??= Number(d, "peakThreads") >= idleThreads + 10 ? clock.Elapsed : null;
                    delayCrossedAt ??= Number(d, "peakQueueDelayMs") > threshold ? clock.Elapsed : null;
                    return threadsRoseAt is not null && delayCrossedAt is not null;
                });
            }
            catch (WebDriverTimeoutException)
            {
                // The assertions below say which of the two the page never showed, with its figures.
            }
            output.WriteLine($"load started at {loadStartedAt.TotalSeconds:0.0} s; the page showed threads rising at {threadsRoseAt?.TotalSeconds:0.0} s, queue delay over {threshold} ms at {delayCrossedAt?.TotalSeconds:0.0} s");
            SaveScreenshot(driver);

            // Assert
            Assert.True(drawnPixels > 500, $"the thread chart drew {drawnPixels} pixels before the load");
            Assert.True(Number(driver, "peakThreads") >= idleThreads + 10, $"threads went from {idleThreads} to {Number(driver, "peakThreads")}");
            Assert.True(Number(driver, "peakQueueDelayMs") > threshold, $"queue delay peaked at {Number(driver, "peakQueueDelayMs")} ms, threshold {threshold} ms");
            Assert.Contains("/api/diagscenario/taskwait", driver.FindElement(By.Id("endpoints")).Text, StringComparison.Ordinal);
        }
        finally
        {
            driver.FindElement(By.Id("load-stop")).Click();
            driver.Quit();
            profile.Delete(recursive: true);
        }
    }

    private static ChromeDriver StartChromium(string profile)
    {
        var chromium = Chromium.Browser ?? throw new InvalidOperationException(ChromiumFactAttribute.Install);
        var chromeDriver = Chromium.Driver ?? throw new InvalidOperationException(ChromiumFactAttribute.Install);
        var options = new ChromeOptions { BinaryLocation = chromium };
        options.AddArguments(
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--window-size=1280,1600", $"--user-data-dir={profile}");
        var service = ChromeDriverService.CreateDefaultService(Path.GetDirectoryName(chromeDriver)!, Path.GetFileName(chromeDriver));
        service.HideCommandPromptWindow = true;
        return new ChromeDriver(service, options, TimeSpan.FromSeconds(60));
    }

    // The page writes its figures to data- attributes on <body> (see wwwroot/app.js).
    private static double Number(IWebDriver driver, string name) =>
        double.TryParse(driver.FindElement(By.TagName("body")).GetDomAttribute($"data-{Kebab(name)}"), NumberStyles.Float, CultureInfo.InvariantCulture, out var value) ? value : 0;

    private static string Kebab(string name) =>
        string.Concat(name.Select(c => char.IsUpper(c) ? "-" + char.ToLowerInvariant(c) : c.ToString()));

    private static void SetValue(ChromeDriver driver, string id, string value)
    {
        var input = driver.FindElement(By.Id(id));
        input.Clear();
        input.SendKeys(value);
    }

    /// <summary>A picture of the starved page for a person to look at (the test's artifacts folder); nothing asserts on it.</summary>
    private static void SaveScreenshot(ChromeDriver driver)
    {
        var directory = Path.Combine(AppContext.BaseDirectory, "artifacts");
        Directory.CreateDirectory(directory);
        var path = Path.Combine(directory, "thread-pool-page-taskwait.png");
        driver.GetScreenshot().SaveAsFile(path);
    }
}
