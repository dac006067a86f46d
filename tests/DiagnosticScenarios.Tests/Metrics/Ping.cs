using System.Diagnostics;

namespace DiagnosticScenarios.Tests.Metrics;

/// <summary>The app's ping through Kestrel: the proof that a burst has starved the pool.</summary>
internal static class Ping
{
    /// <summary>How long ping took, or null when it did not answer within <paramref name="patience"/>.</summary>
    public static async Task<TimeSpan?> AnswerTimeAsync(HttpClient app, TimeSpan patience)
    {
        using var timeout = new CancellationTokenSource(patience);
        var clock = Stopwatch.StartNew();
        try
        {
            using var response = await app.GetAsync(new Uri("api/diagscenario/ping", UriKind.Relative), timeout.Token);
            return clock.Elapsed;
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested)
        {
            return null;
        }
    }
}
