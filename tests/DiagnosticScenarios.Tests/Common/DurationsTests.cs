using DiagnosticScenarios.Common;
using DiagnosticScenarios.LoadRunner.Cli;
using DiagnosticScenarios.Tests.DotnetBlocking;

namespace DiagnosticScenarios.Tests.Common;

/// <summary>The one duration grammar, and the two command lines that read it.</summary>
public sealed class DurationsTests
{
    [Theory]
    [InlineData("500ms", 500)]
    [InlineData("10s", 10_000)]
    [InlineData("2m", 120_000)]
    [InlineData("1h", 3_600_000)]
    [InlineData("1.5S", 1_500)]
    [InlineData("30", 30_000)]
    [InlineData("00:00:30", 30_000)]
    [InlineData("01:02:03", 3_723_000)]
    [InlineData("00:00:00.2", 200)]
    [InlineData(" 2m ", 120_000)]
    public void TryParse_ReadsEachForm_OfTheGrammar(string text, long expectedMs)
    {
        Assert.True(Durations.TryParse(text, out var duration), text);
        Assert.Equal(TimeSpan.FromMilliseconds(expectedMs), duration);
    }

    [Theory]
    [InlineData("soon")]
    [InlineData("")]
    [InlineData("-1s")]
    [InlineData("NaN")]
    [InlineData("Infinity")]
    [InlineData("10 minutes")]
    [InlineData("1:30")]
    [InlineData("99999999999999h")]
    public void TryParse_Refuses_WhatIsNotADuration(string text)
    {
        Assert.False(Durations.TryParse(text, out _), text);
    }

    [Fact]
    public void TryParse_RefusesZero_UnlessAllowed()
    {
        Assert.False(Durations.TryParse("0s", out _));
        Assert.True(Durations.TryParse("0s", out var zero, allowZero: true));
        Assert.Equal(TimeSpan.Zero, zero);
    }

    [Fact]
    public async Task LoadRunner_TakesTheClockForm_ThatOnlyTheDiagnosisCliTookBefore()
    {
        using var output = new StringWriter();
        using var error = new StringWriter();

        // Nothing listens on the discard port: the run ends at its duration with every request refused, and says so (exit
        // 1); a duration it could not read would have been a usage error (exit 2) before any request.
        var exitCode = await CommandLine.RunAsync(["run", "--url", "http://127.0.0.1:9/", "-c", "1", "-d", "00:00:00.2", "--json"], output, error).DefaultTimeout();

        Assert.True(exitCode == 1 && error.ToString().StartsWith("Nothing answered at http://127.0.0.1:9/", StringComparison.Ordinal), error.ToString());
        using var report = System.Text.Json.JsonDocument.Parse(output.ToString());
        Assert.InRange(TimeSpan.Parse(report.RootElement.GetProperty("elapsed").GetString()!, System.Globalization.CultureInfo.InvariantCulture), TimeSpan.FromSeconds(0.2), TimeSpan.FromSeconds(5));
    }

    [Fact]
    public async Task DiagnosisCli_TakesHours_ThatOnlyTheLoadRunnerTookBefore()
    {
        // Read, the duration lets the command go on to look for the process, which is not there: exit 1, not usage and 2.
        var run = await DiagnoseCli.RunAsync("waits", "-n", "NoSuchDiagnosticScenariosProcess", "--duration", "1h").DefaultTimeout();

        Assert.True(run.ExitCode == 1 && run.Error.Contains("No process is named", StringComparison.Ordinal), run.ToString());
    }

    [Fact]
    public async Task BothCommandLines_RefuseABadDuration_WithTheSameMessage()
    {
        using var output = new StringWriter();
        using var error = new StringWriter();

        var runnerExit = await CommandLine.RunAsync(["run", "--url", "http://127.0.0.1:9/", "-d", "soon"], output, error).DefaultTimeout();
        var diagnose = await DiagnoseCli.RunAsync("waits", "-p", "1", "--duration", "soon").DefaultTimeout();

        Assert.Equal(2, runnerExit);
        Assert.Equal(2, diagnose.ExitCode);
        Assert.Contains(Durations.NotADuration("soon"), error.ToString(), StringComparison.Ordinal);
        Assert.Contains(Durations.NotADuration("soon"), diagnose.Error, StringComparison.Ordinal);
        // And, as for every bad argument, the usage after it (the two commands' other bad arguments are their own tests' rows).
        Assert.Contains("Usage:", error.ToString(), StringComparison.Ordinal);
        Assert.Contains("Usage:", diagnose.Error, StringComparison.Ordinal);
    }
}
