using System.Text.Json;
using System.Text.Json.Serialization;

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
