using System.ComponentModel.DataAnnotations;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using DiagnosticScenarios.Common;
using Microsoft.AspNetCore.Mvc;

namespace DiagnosticScenarios.Scenarios.Sql;

/// <summary>
/// The SQL article's five shapes around one <c>WAITFOR DELAY</c> (or <c>pg_sleep</c>), run by the configured
/// provider. Every action opens a connection and executes the same command, each line in the action itself;
/// only the way it waits differs.
/// The single GOOD shape is <see cref="Async"/>.
/// </summary>
/// <remarks>
/// Each response carries <c>X-Connection-Wait-Ms</c>: the time spent opening the connection (waiting for the
/// pool, or logging in when the pool is cold), so a pool that is too small is visible, not mistaken for the threads.
/// The same time goes to the <c>DiagnosticScenarios.Sql</c> meter.
/// </remarks>
[ApiController]
[Route("api/sqlscenario")]
[Produces("text/plain")]
[ServiceFilter<DatabaseUnavailableFilter>]
public sealed class SqlScenarioController(SqlScenarioDatabase database, SqlScenarioMetrics metrics) : ControllerBase
{
    /// <summary>The response header that reports how long opening the connection took, in milliseconds.</summary>
    public const string ConnectionWaitHeader = "X-Connection-Wait-Ms";

    /// <summary>The delay when a request names no <c>delayMs</c>.</summary>
    public const int DefaultDelayMs = 1000;

    /// <summary>BAD: a sync action calls <c>command.ExecuteNonQuery()</c>.</summary>
    /// <remarks>The driver blocks this pool thread in a socket read for the whole query; the pool gets no signal to compensate.</remarks>
    /// <param name="delayMs">How long the database waits before it answers, in milliseconds (0–60000, default 1000).</param>
    [HttpGet("sync")]
    public string Sync([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
        using var connection = database.CreateConnection();
        using var command = database.CreateDelayCommand(connection, Delay(delayMs));
        var opening = Stopwatch.GetTimestamp();
#pragma warning disable DSB001 // deliberate: this endpoint demonstrates blocking driver calls
        connection.Open();
        ConnectionOpened(opening);
        // BAD: ExecuteNonQuery parks this pool thread in a blocking socket read for the whole WAITFOR.
        command.ExecuteNonQuery();
#pragma warning restore DSB001
        return "success:sql-sync";
    }

    /// <summary>BAD: an <c>async Task</c> action with the synchronous <c>ExecuteNonQuery()</c> inside.</summary>
    /// <remarks>An async signature does not make a blocking driver call asynchronous; the article measured it the worst of the five.</remarks>
    /// <param name="delayMs">How long the database waits before it answers, in milliseconds (0–60000, default 1000).</param>
#pragma warning disable CS1998 // deliberate: an async method with nothing to await is the point of this endpoint
    [HttpGet("asyncsyncio")]
    public async Task<string> AsyncSyncIo([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
#pragma warning disable VSTHRD103, DSB001 // deliberate: this endpoint demonstrates blocking calls inside an async method
        using var connection = database.CreateConnection();
        using var command = database.CreateDelayCommand(connection, Delay(delayMs));
        var opening = Stopwatch.GetTimestamp();
        connection.Open();
        ConnectionOpened(opening);
        // BAD: 'async' on the signature changes nothing; ExecuteNonQuery still blocks this pool thread.
        command.ExecuteNonQuery();
#pragma warning restore VSTHRD103, DSB001
        return "success:sql-asyncsyncio";
    }
#pragma warning restore CS1998

    /// <summary>BAD: "fake async", <c>command.ExecuteNonQuery()</c> inside <c>await Task.Run(...)</c>.</summary>
    /// <remarks>Frees the request thread by blocking another pool thread for the whole query; of the blocking-call analyzers only MA0042, at its default info severity, flags the calls inside the lambda.</remarks>
    /// <param name="delayMs">How long the database waits before it answers, in milliseconds (0–60000, default 1000).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away (only before the blocking query starts).</param>
    [HttpGet("taskrun")]
    public async Task<string> TaskRun([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
        using var connection = database.CreateConnection();
        using var command = database.CreateDelayCommand(connection, Delay(delayMs));
#pragma warning disable DSB006 // deliberate: this endpoint demonstrates fake async
        // BAD: Task.Run moves the blocking open and ExecuteNonQuery to another pool thread, which it holds for the whole WAITFOR.
        await Task.Run(
            () =>
            {
                var opening = Stopwatch.GetTimestamp();
                connection.Open();
                ConnectionOpened(opening);
                command.ExecuteNonQuery();
            },
            cancellationToken);
#pragma warning restore DSB006
        return "success:sql-taskrun";
    }

    /// <summary>BAD: sync-over-async, <c>command.ExecuteNonQueryAsync().Wait()</c>.</summary>
    /// <remarks>The I/O is asynchronous but this pool thread waits for it; cooperative blocking makes the pool grow a little faster, no more.</remarks>
    /// <param name="delayMs">How long the database waits before it answers, in milliseconds (0–60000, default 1000).</param>
    [HttpGet("wait")]
    public string Wait([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs)
    {
        using var connection = database.CreateConnection();
        using var command = database.CreateDelayCommand(connection, Delay(delayMs));
        var opening = Stopwatch.GetTimestamp();
#pragma warning disable DSB001 // deliberate: this endpoint's blocking code opens its connection synchronously too
        connection.Open();
#pragma warning restore DSB001
        ConnectionOpened(opening);
#pragma warning disable VSTHRD002, VSTHRD103, DSB002 // deliberate: this endpoint demonstrates sync-over-async
        // BAD: .Wait() parks this pool thread until the async command completes (sync-over-async).
        command.ExecuteNonQueryAsync().Wait();
#pragma warning restore VSTHRD002, VSTHRD103, DSB002
        return "success:sql-wait";
    }

    /// <summary>GOOD: <c>await command.ExecuteNonQueryAsync(cancellationToken)</c>; no thread is held while the query runs.</summary>
    /// <param name="delayMs">How long the database waits before it answers, in milliseconds (0–60000, default 1000).</param>
    /// <param name="cancellationToken">Cancelled when the client goes away; the driver then cancels the command on the server.</param>
    [HttpGet("async")]
    public async Task<string> Async([FromQuery, Range(0, ScenarioLimits.MaxDelayMs)] int? delayMs, CancellationToken cancellationToken)
    {
        await using var connection = database.CreateConnection();
        await using var command = database.CreateDelayCommand(connection, Delay(delayMs));
        var opening = Stopwatch.GetTimestamp();
        await connection.OpenAsync(cancellationToken);
        ConnectionOpened(opening);
        // GOOD: await hands this thread back to the pool until the database answers; that is the one difference from sync.
        await command.ExecuteNonQueryAsync(cancellationToken);
        return "success:sql-async";
    }

    private static TimeSpan Delay(int? delayMs) => TimeSpan.FromMilliseconds(delayMs ?? DefaultDelayMs);

    // Opening waits for a pooled connection, or logs a new one in: reported so a pool that is too small shows as such.
    private void ConnectionOpened(long openingTimestamp, [CallerMemberName] string scenario = "")
    {
        var opened = Stopwatch.GetElapsedTime(openingTimestamp);
        Response.Headers[ConnectionWaitHeader] = ((long)opened.TotalMilliseconds).ToString(CultureInfo.InvariantCulture);
        metrics.RecordConnectionWait(opened, database.Provider, scenario.ToLowerInvariant());
    }
}
