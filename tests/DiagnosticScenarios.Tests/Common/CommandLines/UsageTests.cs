using System.CommandLine;
using System.CommandLine.Help;
using DiagnosticScenarios.Common.CommandLines;

namespace DiagnosticScenarios.Tests.Common.CommandLines;

/// <summary>How both command lines answer a wrong command line: the errors, a blank line, the meant command's help, exit code 2.</summary>
public sealed class UsageTests
{
    [Fact]
    public void Explain_WritesTheErrors_ThenTheHelpOfTheVerbMeant_AndReturnsBadArguments()
    {
        using var error = new StringWriter();
        var parsed = Tool().Parse(["verb", "--count", "many"]);

        var exitCode = Usage.Explain(parsed, error, ["First error.", "Second error."]);

        Assert.Equal(ExitCodes.BadArguments, exitCode);
        Assert.StartsWith($"First error.{Environment.NewLine}Second error.{Environment.NewLine}{Environment.NewLine}Description:{Environment.NewLine}  Does the verb.", error.ToString(), StringComparison.Ordinal);
        Assert.Contains("tool verb [options]", error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Explain_WithoutAVerb_WritesTheParsesOwnErrors_ThenTheRootsHelp()
    {
        using var error = new StringWriter();
        var parsed = Tool().Parse(["frobnicate"]);

        var exitCode = Usage.Explain(parsed, error);

        Assert.Equal(ExitCodes.BadArguments, exitCode);
        Assert.StartsWith($"{parsed.Errors[0].Message}{Environment.NewLine}", error.ToString(), StringComparison.Ordinal);
        Assert.Contains("tool [command] [options]", error.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain("--count", error.ToString(), StringComparison.Ordinal);
    }

    // Named, as the load runner's root is, so that the help does not take the test host's name.
    private static Command Tool() => new("tool", "Does things.")
    {
        new HelpOption { Recursive = true },
        new Command("verb", "Does the verb.") { new Option<int>("--count") },
    };
}
