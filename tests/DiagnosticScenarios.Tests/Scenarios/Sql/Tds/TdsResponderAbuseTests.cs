using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using DiagnosticScenarios.OffPool;
using DiagnosticScenarios.Scenarios.Sql;
using DiagnosticScenarios.Scenarios.Sql.Tds;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Xunit.Abstractions;

namespace DiagnosticScenarios.Tests.Scenarios.Sql.Tds;

/// <summary>
/// The TDS responder tried as the page's port is (PagePortAbuseTests), on deadlines of a second: a session idle between
/// messages and a message dripped in are cut at their deadlines, a thread that cannot start ends one session in one log
/// line, a full responder sheds a session that never logged in but never a logged-in one, the session cap keeps room for
/// the app's pool, and a WAITFOR batch of any length is parsed in time linear in it. After each a client still logs in
/// and has its WAITFOR answered.
/// </summary>
public sealed class TdsResponderAbuseTests(ITestOutputHelper output)
{
    private static readonly OffPoolLimits Short = new()
    {
        MaxConnections = 4,
        MaxStreams = 0,
        FirstByteTimeout = TimeSpan.FromSeconds(1),
        RequestTimeout = TimeSpan.FromSeconds(1),
        IdleTimeout = TimeSpan.FromSeconds(1),
    };

    [Fact]
    public void ASessionIdleBetweenMessages_IsClosedAtTheIdleTimeout()
    {
        using var responder = Started();
        using var idle = new RawTdsClient(responder.Port);
        idle.Login();
        var clock = Stopwatch.StartNew();

        var closed = ClosedByServer(idle.Socket, TimeSpan.FromSeconds(10));

        output.WriteLine($"idle session closed after {clock.Elapsed.TotalMilliseconds:0} ms (idle timeout {Short.IdleTimeout.TotalMilliseconds:0} ms)");
        Assert.True(closed, "the idle session was never closed");
        Assert.InRange(clock.Elapsed, Short.IdleTimeout - TimeSpan.FromMilliseconds(100), Short.IdleTimeout + TimeSpan.FromSeconds(1));
        AssertServes(responder);
    }

    /// <summary>A packet header a byte at a time, each read well within any per-read timeout: cut by the whole-message deadline.</summary>
    [Fact]
    public void AMessageDrippedIn_IsClosedAtTheWholeMessageDeadline()
    {
        using var responder = Started();
        using var drip = Connect(responder.Port);
        var clock = Stopwatch.StartNew();
        var closed = false;
        for (var i = 0; i < 20 && !closed; i++)
        {
            try
            {
                drip.Send([0x12]);
            }
            catch (SocketException)
            {
                closed = true;
                break;
            }

            closed = ClosedByServer(drip, TimeSpan.FromMilliseconds(300));
        }

        output.WriteLine($"a byte every 300 ms: closed after {clock.Elapsed.TotalMilliseconds:0} ms (deadline {Short.RequestTimeout.TotalMilliseconds:0} ms)");
        Assert.True(closed, "the dripping session was never closed");
        Assert.InRange(clock.Elapsed, Short.RequestTimeout - TimeSpan.FromMilliseconds(100), Short.RequestTimeout + TimeSpan.FromSeconds(1));
        AssertServes(responder);
    }

    [Fact]
    public void AThreadThatCannotStart_EndsThatSessionInOneLogLine_AndTheNextIsServed()
    {
        var log = new ListLoggerProvider();
        var refuse = 1;
        using var responder = new TdsResponder(log.CreateLogger<TdsResponder>(), Short)
        {
            StartThread = thread =>
            {
                if (Interlocked.Exchange(ref refuse, 0) == 1)
                {
                    throw new OutOfMemoryException("Thread failed to start.");
                }

                thread.Start();
            },
        };
        responder.Start();
        using var refused = Connect(responder.Port);

        var closed = ClosedByServer(refused, TimeSpan.FromSeconds(5));

        Assert.True(closed, "the session whose thread did not start was left open");
        Assert.Single(log.Lines, l => l.Contains("could not start a thread", StringComparison.Ordinal));
        AssertServes(responder);
    }

    /// <summary>Full of connections that never logged in, the responder sheds the oldest for a client that logs in.</summary>
    [Fact]
    public void AFullResponder_ShedsASessionThatNeverLoggedIn_ForAClientThatDoes()
    {
        using var responder = Started();
        var silent = Enumerable.Range(0, Short.MaxConnections).Select(_ => Connect(responder.Port)).ToList();
        try
        {
            Assert.True(Poll.Until(() => responder.ConnectionCount == Short.MaxConnections, TimeoutExtensions.Default));

            AssertServes(responder);
        }
        finally
        {
            silent.ForEach(s => s.Dispose());
        }
    }

    /// <summary>Logged-in sessions are a pool's: a full responder refuses a newcomer rather than shed one.</summary>
    [Fact]
    public void AFullResponder_NeverShedsALoggedInSession()
    {
        using var responder = Started(new OffPoolLimits { MaxConnections = Short.MaxConnections, MaxStreams = 0, IdleTimeout = TimeSpan.FromSeconds(30) });
        var pool = Enumerable.Range(0, Short.MaxConnections).Select(_ => new RawTdsClient(responder.Port)).ToList();
        try
        {
            pool.ForEach(c => c.Login());
            using var newcomer = Connect(responder.Port);

            Assert.True(ClosedByServer(newcomer, TimeSpan.FromSeconds(5)), "a newcomer was served beyond the cap");
            Assert.All(pool, c => Assert.False(c.Socket.Poll(0, SelectMode.SelectRead), "a logged-in session was shed"));
        }
        finally
        {
            pool.ForEach(c => c.Dispose());
        }
    }

    [Fact]
    public void TheSessionCap_KeepsRoomForTheAppsOwnPool()
    {
        var defaults = new OffPoolOptions().Tds;
        var services = new ServiceCollection().AddLogging();
        services.AddSqlScenarios(new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["OffPool:Tds:MaxConnections"] = $"{SqlScenarioDatabase.MaxPoolSize}",
        }).Build());
        using var provider = services.BuildServiceProvider();

        var refused = Assert.Throws<OptionsValidationException>(() => { _ = provider.GetRequiredService<IOptions<OffPoolOptions>>().Value; });

        Assert.True(defaults.MaxConnections > SqlScenarioDatabase.MaxPoolSize, $"the default cap {defaults.MaxConnections} leaves no room for the pool's {SqlScenarioDatabase.MaxPoolSize}");
        Assert.Contains("SqlClient pool", refused.Message, StringComparison.Ordinal);
    }

    /// <summary>
    /// The backtracking pattern had taken time quadratic in the spaces after the statement: 12 s for the 32 K characters a
    /// 64 KB message carries. Linear now, so even a megabyte, beyond any message, is parsed at once.
    /// </summary>
    [Theory]
    [InlineData("a megabyte of spaces", 1024 * 1024, "", "")]
    [InlineData("the statement, a megabyte of spaces, then x", 1024 * 1024, "WAITFOR DELAY '00:00:01'", "x")]
    [InlineData("the statement, then the most spaces a message carries, then x", TdsProtocol.MaxMessageLength / 2, "WAITFOR DELAY '00:00:01'", "x")]
    public void ParseWaitforDelay_TakesTimeLinearInTheBatch(string what, int spaces, string before, string after)
    {
        var text = before + new string(' ', spaces) + after;
        TdsProtocol.ParseWaitforDelay("WAITFOR DELAY '00:00:01'");

        var clock = Stopwatch.StartNew();
        var delay = TdsProtocol.ParseWaitforDelay(text);
        clock.Stop();

        output.WriteLine($"{what} ({text.Length} characters): {clock.Elapsed.TotalMilliseconds:0.0} ms");
        Assert.Null(delay);
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(1), $"{what}: {clock.Elapsed.TotalMilliseconds:0} ms");
    }

    private static TdsResponder Started(OffPoolLimits? limits = null)
    {
        var responder = new TdsResponder(NullLogger<TdsResponder>.Instance, limits ?? Short);
        responder.Start();
        return responder;
    }

    private static Socket Connect(int port)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Connect(new IPEndPoint(IPAddress.Loopback, port));
        return socket;
    }

    // A client logs in and has a short WAITFOR answered.
    private static void AssertServes(TdsResponder responder)
    {
        using var client = new RawTdsClient(responder.Port);
        client.Login();
        client.Send(0x01, RawTdsClient.SqlBatch("WAITFOR DELAY '00:00:00.010'"));
        Assert.Equal(0x0000, RawTdsClient.FinalDoneStatus(client.Receive()));
    }

    private static bool ClosedByServer(Socket socket, TimeSpan within)
    {
        try
        {
            if (!socket.Poll((int)within.TotalMicroseconds, SelectMode.SelectRead))
            {
                return false;
            }

            return socket.Receive(new byte[4096]) == 0;
        }
        catch (SocketException)
        {
            return true;
        }
    }

    private sealed class ListLoggerProvider : ILoggerProvider
    {
        private readonly DiagnosticScenarios.Tests.OffPool.ThreadedHttpServerTests.ListLogger _logger = new();

        public IReadOnlyList<string> Lines => _logger.Lines;

        public ILogger CreateLogger(string categoryName) => _logger;

        public ILogger<T> CreateLogger<T>() => new Logger<T>(new LoggerFactory([this]));

        public void Dispose()
        {
        }
    }
}
