using System.Data.Common;
using System.Diagnostics;

namespace DiagnosticScenarios.Sql;

/// <summary>
/// One scenario query: a connection of the configured provider and its delay command. Opening is timed, so the
/// time a request spent waiting for a pooled connection (or logging in a new one) shows up in the results.
/// </summary>
public sealed class DelayQuery : IDisposable, IAsyncDisposable
{
    private readonly DbConnection _connection;
    private readonly Action<TimeSpan> _opened;

    public DelayQuery(SqlScenarioDatabase database, TimeSpan delay, Action<TimeSpan> opened)
    {
        _connection = database.CreateConnection();
        Command = database.CreateDelayCommand(_connection, delay);
        _opened = opened;
    }

    /// <summary>The command whose execution is the line each scenario shape differs in.</summary>
    public DbCommand Command { get; }

    /// <summary>Opens the connection on the calling thread: waits for the pool, or logs in, with blocking I/O.</summary>
    public void Open()
    {
        var started = Stopwatch.GetTimestamp();
        _connection.Open();
        _opened(Stopwatch.GetElapsedTime(started));
    }

    /// <summary>Opens the connection asynchronously.</summary>
    public async Task OpenAsync(CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        await _connection.OpenAsync(cancellationToken);
        _opened(Stopwatch.GetElapsedTime(started));
    }

    public void Dispose()
    {
        Command.Dispose();
        _connection.Dispose();
    }

    public async ValueTask DisposeAsync()
    {
        await Command.DisposeAsync();
        await _connection.DisposeAsync();
    }
}
