using System.Net;
using System.Text.Json;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>Reads an answer that must be an RFC 9457 ProblemDetails.</summary>
public static class ProblemDetailsAssert
{
    public static async Task<JsonElement> IsProblemAsync(HttpResponseMessage response, HttpStatusCode expected)
    {
        var body = await response.Content.ReadAsStringAsync().DefaultTimeout();
        Assert.True(expected == response.StatusCode, $"Expected {(int)expected}, got {(int)response.StatusCode}: {body}");
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);

        using var document = JsonDocument.Parse(body);
        var problem = document.RootElement.Clone();
        Assert.Equal((int)expected, problem.GetProperty("status").GetInt32());
        Assert.False(string.IsNullOrWhiteSpace(problem.GetProperty("title").GetString()), body);
        return problem;
    }
}
