namespace DiagnosticScenarios.Tests.PoolHealth.Metrics;

/// <summary>The app's ping through Kestrel: the proof that a burst has starved the pool.</summary>
internal static class Ping
{
    /// <summary>How long ping took to answer success, or null when it did not within <paramref name="patience"/>.</summary>
    public static async Task<TimeSpan?> AnswerTimeAsync(HttpClient app, TimeSpan patience)
    {
        var (answered, success, took) = await TimeoutExtensions.AnswerWithinAsync(patience, async giveUp =>
        {
            using var response = await app.GetAsync(new Uri("api/diagscenario/ping", UriKind.Relative), giveUp);
            return response.IsSuccessStatusCode;
        });
        return answered && success ? took : null;
    }
}
