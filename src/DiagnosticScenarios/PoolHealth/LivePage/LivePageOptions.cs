using System.ComponentModel.DataAnnotations;

namespace DiagnosticScenarios.PoolHealth.LivePage;

/// <summary>Configuration section <c>LivePage</c>: the live page's own server.</summary>
public sealed class LivePageOptions
{
    public const string SectionName = "LivePage";

    /// <summary>
    /// The loopback port the live page's server listens on, beside the app's own (5000): 0 takes a free one. When it is
    /// taken, the app serves the page through Kestrel instead, and says so on the page and in the log.
    /// </summary>
    [Range(0, 65535)]
    public int Port { get; set; } = 5002;
}
