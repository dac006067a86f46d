using System.Text.Json;
using System.Text.Json.Serialization;
using DiagnosticScenarios.Common.Catalogue;

namespace DiagnosticScenarios.LoadRunner.Compare;

/// <summary>How the runner reads and writes JSON: <c>compare.json</c>, <c>run --json</c> and the app's catalogue.</summary>
public static class CompareJson
{
    public static JsonSerializerOptions Options { get; } = new(JsonSerializerDefaults.Web)
    {
        WriteIndented = true,
        Converters = { new JsonStringEnumConverter(JsonNamingPolicy.CamelCase) },
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    };
}

/// <summary>
/// A verdict in compare.json: lower-case (<c>bad</c>, <c>good</c>), as the reports under docs/benchmarks hold them, where
/// the catalogue writes <c>BAD</c> and <c>GOOD</c>; read in either case.
/// </summary>
internal sealed class ReportVerdictConverter : JsonConverter<ScenarioVerdict>
{
    public override ScenarioVerdict Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        var text = reader.GetString();
        return Enum.GetValues<ScenarioVerdict>().Where(v => string.Equals(v.ToString(), text, StringComparison.OrdinalIgnoreCase)).Cast<ScenarioVerdict?>().FirstOrDefault()
            ?? throw new JsonException($"Not a verdict: '{text}'.");
    }

    public override void Write(Utf8JsonWriter writer, ScenarioVerdict value, JsonSerializerOptions options) =>
        writer.WriteStringValue(value.ToString().ToLowerInvariant());
}
