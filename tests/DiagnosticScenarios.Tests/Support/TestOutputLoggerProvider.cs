using System.Globalization;
using Microsoft.Extensions.Logging;

namespace DiagnosticScenarios.Tests.Support;

/// <summary>
/// The in-process app's log lines, written to the output of the test running at the time, which xunit shows beside a
/// failure: what the app logged (a starvation warning, an exception it turned into a 500) is read with the assertion.
/// </summary>
internal sealed class TestOutputLoggerProvider(InProcessApp app) : ILoggerProvider
{
    public ILogger CreateLogger(string categoryName) => new TestOutputLogger(app, categoryName);

    public void Dispose()
    {
    }

    private sealed class TestOutputLogger(InProcessApp app, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (app.OutputHelper is not { } output || !IsEnabled(logLevel))
            {
                return;
            }

            var line = string.Create(CultureInfo.InvariantCulture, $"{DateTime.Now:HH:mm:ss.fff} app {logLevel} {category}: {formatter(state, exception)}");
            try
            {
                output.WriteLine(exception is null ? line : $"{line}\n{exception}");
            }
            catch (InvalidOperationException)
            {
                // The test this output belongs to has ended; the app logged after it (a background thread, the host stopping).
            }
        }
    }
}
