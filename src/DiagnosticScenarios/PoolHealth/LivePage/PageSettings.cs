namespace DiagnosticScenarios.PoolHealth.LivePage;

/// <summary>
/// The answer of <c>GET /api/threadpool/page</c>: where the page found itself, and where its controls go.
/// </summary>
/// <param name="ServedOffThePool">Whether the page and its data come from the live page's own threads (they then stay live while the pool starves).</param>
/// <param name="ControlsAt">The app's own address for the controls (<c>http://localhost:5000</c>), or empty for the page's own origin.</param>
/// <param name="LivePage">Where the live page's own server listens, or null when it does not.</param>
public sealed record PageSettings(bool ServedOffThePool, string ControlsAt, string? LivePage);
