using System.Diagnostics;
using DiagnosticScenarios.Scenarios.Sql.Tds;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Sql.Tds;

/// <summary>Microsoft.Data.SqlClient itself, over real TCP, against the embedded responder: both its sync and async paths.</summary>
public sealed class EmbeddedSqlClientTests : IDisposable
{
    private readonly TdsResponder _responder = new(NullLogger<TdsResponder>.Instance);

    public EmbeddedSqlClientTests() => _responder.Start();

    public void Dispose() => _responder.Dispose();

    [Fact]
    public void SqlClient_ConnectsAndRunsWaitfor_WithSyncCalls()
    {
        using var connection = new SqlConnection(ConnectionString());
        using var command = new SqlCommand("WAITFOR DELAY '00:00:00.200'", connection);
        var started = Stopwatch.StartNew();

        connection.Open();
        command.ExecuteNonQuery();

        Assert.True(started.Elapsed >= TimeSpan.FromMilliseconds(195), $"the 200 ms WAITFOR ended after {started.ElapsedMilliseconds} ms");
        Assert.Single(_responder.WaitforTimings());
    }

    [Fact]
    public async Task SqlClient_ConnectsAndRunsWaitfor_WithAsyncCalls()
    {
        await using var connection = new SqlConnection(ConnectionString());
        await using var command = new SqlCommand("WAITFOR DELAY '00:00:00.200'", connection);
        var started = Stopwatch.StartNew();

        await connection.OpenAsync().DefaultTimeout();
        await command.ExecuteNonQueryAsync().DefaultTimeout();

        Assert.True(started.Elapsed >= TimeSpan.FromMilliseconds(195), $"the 200 ms WAITFOR ended after {started.ElapsedMilliseconds} ms");
        Assert.Single(_responder.WaitforTimings());
    }

    [Fact]
    public async Task SqlClient_CommandTimeout_SendsAttentionAndKeepsTheConnectionUsable()
    {
        await using var connection = new SqlConnection(ConnectionString());
        await connection.OpenAsync().DefaultTimeout();
        await using var slow = new SqlCommand("WAITFOR DELAY '00:00:20'", connection) { CommandTimeout = 1 };

        var error = await Assert.ThrowsAsync<SqlException>(() => slow.ExecuteNonQueryAsync().DefaultTimeout());

        Assert.Contains("Timeout", error.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Equal(1, _responder.AttentionCount);
        await using var next = new SqlCommand("WAITFOR DELAY '00:00:00.050'", connection);
        await next.ExecuteNonQueryAsync().DefaultTimeout();
    }

    [Fact]
    public async Task SqlClient_Cancellation_SendsAttention()
    {
        await using var connection = new SqlConnection(ConnectionString());
        await connection.OpenAsync().DefaultTimeout();
        await using var slow = new SqlCommand("WAITFOR DELAY '00:00:20'", connection);
        using var cancellation = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
        var started = Stopwatch.StartNew();

        var error = await Record.ExceptionAsync(() => slow.ExecuteNonQueryAsync(cancellation.Token).DefaultTimeout());

        Assert.True(error is SqlException or OperationCanceledException, $"Expected a cancellation, got {error}");
        Assert.InRange(started.Elapsed, TimeSpan.Zero, TimeSpan.FromSeconds(10));
        Assert.Equal(1, _responder.AttentionCount);
    }

    [Fact]
    public void SqlClient_RaisesSqlException_ForAnythingButWaitfor()
    {
        using var connection = new SqlConnection(ConnectionString());
        using var command = new SqlCommand("SELECT 1", connection);
        connection.Open();

        var error = Assert.Throws<SqlException>(() => command.ExecuteNonQuery());

        Assert.Contains("WAITFOR DELAY", error.Message, StringComparison.Ordinal);
    }

    // Pooling off: each test sees its own connections, never one another test left in a shared pool.
    private string ConnectionString() => $"Server=tcp:127.0.0.1,{_responder.Port};User ID=test;Password=test;Encrypt=False;Pooling=False;Connect Timeout=5";
}
