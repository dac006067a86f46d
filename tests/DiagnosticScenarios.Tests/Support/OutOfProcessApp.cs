using DiagnosticScenarios.LoadRunner.Server;
using DiagnosticScenarios.Tests.Experiments;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// The app in a process of its own, the one way the tests start it: the build the test project references, two processors
/// and a cold pool unless a test says otherwise, on a free loopback port, ready within
/// <see cref="MeasurementCache.MeasurementTimeout"/>; killed with its children when disposed. Another app (a fixture)
/// starts the same way from its own options.
/// </summary>
internal static class OutOfProcessApp
{
    /// <summary>This app's default options; a test changes what it needs with <c>with</c>.</summary>
    public static ServerOptions Options => new() { AppPath = LoadExperiment.AppPath };

    /// <summary>This app, with <paramref name="adjust"/> applied to its default options.</summary>
    public static Task<ServerProcess> StartAsync(Func<ServerOptions, ServerOptions>? adjust = null) =>
        StartAsync(adjust is null ? Options : adjust(Options));

    /// <summary>Any app of <paramref name="options"/>.</summary>
    public static Task<ServerProcess> StartAsync(ServerOptions options) =>
        ServerProcess.StartAsync(options).TimeoutAfter(MeasurementCache.MeasurementTimeout);
}
