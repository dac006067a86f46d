using System.CommandLine;
using DiagnosticScenarios.Common;
using DiagnosticScenarios.Common.CommandLines;

namespace DiagnosticScenarios.Tests.Common.CommandLines;

/// <summary>The option parsers both command lines share: a value they refuse is named in the option's own words.</summary>
public sealed class OptionValuesTests
{
    [Theory]
    [InlineData("--connections takes a whole number from 1 to 100, not '0'.", "-c", "0")]
    [InlineData("--connections takes a whole number from 1 to 100, not '101'.", "--connections", "101")]
    [InlineData("--connections takes a whole number from 1 to 100, not 'abc'.", "-c", "abc")]
    [InlineData("--requests takes a whole number of 1 or more, not '0'.", "-n", "0")]
    [InlineData("--requests takes a whole number of 1 or more, not '99999999999'.", "-n", "99999999999")]
    [InlineData("--rate takes a positive number, not '0'.", "--rate", "0")]
    [InlineData("--rate takes a positive number, not 'NaN'.", "--rate", "NaN")]
    [InlineData("--rate takes a positive number, not 'Infinity'.", "--rate", "Infinity")]
    public void ANumberOutOfItsRange_IsRefused_InTheOptionsLongName(string message, params string[] args)
    {
        var parsed = Parse(args);

        Assert.Equal([message], parsed.Errors.Select(e => e.Message));
    }

    [Fact]
    public void ADuration_IsRefusedAtZero_UnlessTheOptionAllowsIt()
    {
        Assert.Equal([Durations.NotADuration("0s")], Parse("--duration", "0s").Errors.Select(e => e.Message));
        Assert.Equal([Durations.NotADuration("soon", allowZero: true)], Parse("--window", "soon").Errors.Select(e => e.Message));
        Assert.Equal(TimeSpan.Zero, Parse("--window", "0s").GetValue<TimeSpan?>("--window"));
    }

    [Fact]
    public void ValuesInRange_AreRead()
    {
        var parsed = Parse("-c", "100", "-n", "2147483647", "--rate", "0.5", "--duration", "2m");

        Assert.Empty(parsed.Errors);
        Assert.Equal(
            (100, int.MaxValue, 0.5, TimeSpan.FromMinutes(2)),
            (parsed.GetValue<int?>("--connections"), parsed.GetValue<int?>("--requests"), parsed.GetValue<double?>("--rate"), parsed.GetValue<TimeSpan?>("--duration")));
    }

    private static ParseResult Parse(params string[] args) => new RootCommand
    {
        new Option<int?>("--connections", "-c") { CustomParser = r => OptionValues.WholeNumber(r, 1, 100) },
        new Option<int?>("--requests", "-n") { CustomParser = r => OptionValues.WholeNumber(r, 1, int.MaxValue) },
        new Option<double?>("--rate") { CustomParser = OptionValues.PositiveNumber },
        new Option<TimeSpan?>("--duration") { CustomParser = r => OptionValues.Duration(r) },
        new Option<TimeSpan?>("--window") { CustomParser = r => OptionValues.Duration(r, allowZero: true) },
    }.Parse(args);
}
