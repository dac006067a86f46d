using System.Diagnostics;
using System.Net.Sockets;
using System.Text;
using DiagnosticScenarios.OffPool;
using Microsoft.Extensions.Logging;

namespace DiagnosticScenarios.Tests.OffPool;

/// <summary>
/// The server of the app's own threads (the live page's, the slow upstream's) and the listener under it: its own answers are
/// ProblemDetails, a handler's fault or a thread that cannot start ends one connection and never the server, slots are made
/// by shedding idle connections and old streams, and a request must arrive whole by its deadline.
/// </summary>
[StartsEarly("a request trickling in until the default deadline drops it: 5–7 s, waiting")]
public sealed class ThreadedHttpServerTests
{
    private const string Get = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

    [Fact]
    public async Task ARequestItCannotRead_IsA400ProblemSayingWhy()
    {
        using var server = Started(Limits(4));

        var (answer, _) = await RawHttp.ExchangeAsync(server.Port, "NOT HTTP AT ALL\r\n\r\n");

        Assert.Equal("Not an HTTP/1.x request line.", RawHttp.AssertProblem(answer, 400));
    }

    /// <summary>As Kestrel refuses them: the page's server had served an HTTP/1.1 request with an empty Host (200).</summary>
    [Theory]
    [InlineData("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nHost: localhost\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")]
    public async Task AnHttp11RequestWithoutOneHost_IsA400Problem(string request)
    {
        using var server = Started(Limits(4));

        var (answer, _) = await RawHttp.ExchangeAsync(server.Port, request);

        Assert.Equal("An HTTP/1.1 request must carry one Host header with a value.", RawHttp.AssertProblem(answer, 400));
    }

    [Fact]
    public async Task AnHttp10RequestWithoutAHost_IsServed()
    {
        using var server = Started(Limits(4));

        var (answer, _) = await RawHttp.ExchangeAsync(server.Port, "GET / HTTP/1.0\r\n\r\n");

        Assert.Equal(200, RawHttp.Status(answer));
    }

    [Fact]
    public async Task AConnectionBeyondItsLimit_WhileEveryOneIsAnswering_IsA503ProblemWithRetryAfter()
    {
        using var release = new ManualResetEventSlim();
        using var server = new ThreadedHttpServer("test", Limits(1), exchange =>
        {
            release.Wait(TimeoutExtensions.Default);
            exchange.Respond(200, "text/plain", "ok");
        });
        server.Start(0);
        using var held = await RawHttp.ConnectAsync(server.Port);
        await held.SendAsync(Encoding.ASCII.GetBytes(Get)).DefaultTimeout();
        Assert.True(await Poll.UntilAsync(() => server.Connections == 1, TimeoutExtensions.Default), "the first request never took its slot");

        var (answer, _) = await RawHttp.ExchangeAsync(server.Port, Get);
        release.Set();

        Assert.Contains("Retry-After: 1\r\n", answer, StringComparison.Ordinal);
        Assert.Equal("Too many connections to this server at once; retry.", RawHttp.AssertProblem(answer, 503));
    }

    /// <summary>On a thread of its own an unhandled exception would have ended the whole app.</summary>
    [Fact]
    public async Task AHandlerThatThrows_IsA500Problem_TheFailureIsReported_AndTheServerGoesOnServing()
    {
        var failures = new List<string>();
        using var server = new ThreadedHttpServer("test", Limits(4), exchange =>
        {
            if (exchange.Request.Path == "/broken")
            {
                throw new InvalidOperationException("a handler's own bug");
            }

            exchange.Respond(200, "text/plain", "ok");
        }, failed: (request, e) => { lock (failures) { failures.Add($"{request.Path}: {e.Message}"); } });
        server.Start(0);

        var (broken, _) = await RawHttp.ExchangeAsync(server.Port, "GET /broken HTTP/1.1\r\nHost: localhost\r\n\r\n");
        var (next, _) = await RawHttp.ExchangeAsync(server.Port, Get);

        Assert.Equal("The test server failed to answer GET /broken: InvalidOperationException.", RawHttp.AssertProblem(broken, 500));
        Assert.Contains("Connection: close\r\n", broken, StringComparison.Ordinal);
        Assert.Equal(["/broken: a handler's own bug"], failures);
        Assert.Equal(200, RawHttp.Status(next));
    }

    /// <summary>
    /// In a container at its pids limit <c>Thread.Start</c> throws: on the accept thread, unguarded, that had ended the app
    /// and leaked the slot taken. Now that connection alone is refused, in one log line, and the next is served.
    /// </summary>
    [Fact]
    public async Task AThreadThatCannotStart_RefusesThatConnectionWith503_InOneLogLine_FreesItsSlot_AndTheNextIsServed()
    {
        var log = new ListLogger();
        var refuse = 1;
        using var server = new ThreadedHttpServer("test", Limits(1), exchange => exchange.Respond(200, "text/plain", "ok"), log);
        server.StartThread = thread =>
        {
            if (Interlocked.Exchange(ref refuse, 0) == 1)
            {
                throw new OutOfMemoryException("Thread failed to start.");
            }

            thread.Start();
        };
        server.Start(0);

        var (refused, _) = await RawHttp.ExchangeAsync(server.Port, Get);
        var (next, _) = await RawHttp.ExchangeAsync(server.Port, Get);

        RawHttp.AssertProblem(refused, 503);
        var line = Assert.Single(log.Lines, l => l.Contains("could not start a thread", StringComparison.Ordinal));
        Assert.Contains("OutOfMemoryException: Thread failed to start.", line, StringComparison.Ordinal);
        // With one slot, the next connection is served only if the refused one's slot was given back.
        Assert.Equal(200, RawHttp.Status(next));
    }

    /// <summary>
    /// A client that sends its head a byte at a time, each within the idle timeout, had held its connection and thread for as
    /// long as it liked, and then one read longer: the whole request now has its deadline from its first byte, at the default.
    /// </summary>
    [Fact]
    public async Task ARequestTricklingIn_IsA408_AtTheDefaultRequestTimeoutFromItsFirstByte()
    {
        var limits = new OffPoolLimits();
        using var server = Started(limits);

        var (answer, held) = await RawHttp.DripAsync(server.Port, "GET / HTTP/1.1\r\nHost: localhost\r\n", TimeSpan.FromSeconds(1), 3 * limits.RequestTimeout);

        RawHttp.AssertProblem(answer, 408);
        Assert.InRange(held, limits.RequestTimeout, limits.RequestTimeout + TimeSpan.FromSeconds(1.5));
    }

    [Fact]
    public async Task AConnectionThatSendsNothing_IsClosedAtTheFirstByteDeadline()
    {
        var limits = Limits(4, firstByte: TimeSpan.FromSeconds(1));
        using var server = Started(limits);
        using var silent = await RawHttp.ConnectAsync(server.Port);

        var held = await RawHttp.HeldSilentAsync(silent, TimeSpan.FromSeconds(10));

        Assert.InRange(held, limits.FirstByteTimeout - TimeSpan.FromMilliseconds(100), limits.FirstByteTimeout + TimeSpan.FromSeconds(1.5));
    }

    [Fact]
    public async Task WhenEverySlotIsTaken_TheOldestIdleConnectionIsShed_AndTheNewRequestServed()
    {
        using var server = Started(Limits(2));
        using var oldest = await RawHttp.ConnectAsync(server.Port);
        Assert.True(await Poll.UntilAsync(() => server.Connections == 1, TimeoutExtensions.Default));
        using var newer = await RawHttp.ConnectAsync(server.Port);
        Assert.True(await Poll.UntilAsync(() => server.Connections == 2, TimeoutExtensions.Default));

        var (answer, _) = await RawHttp.ExchangeAsync(server.Port, Get);
        var oldestClosedAfter = await RawHttp.HeldSilentAsync(oldest, TimeSpan.FromSeconds(2));

        Assert.Equal(200, RawHttp.Status(answer));
        Assert.NotEqual(Timeout.InfiniteTimeSpan, oldestClosedAfter);
        Assert.True(newer.Poll(0, SelectMode.SelectRead) is false, "the newer idle connection was shed instead of the oldest");
    }

    /// <summary>A stream beyond the stream limit ends the oldest after a whole event; the newest goes on.</summary>
    [Fact]
    public async Task AStreamBeyondTheStreamLimit_EndsTheOldestStreamAfterAWholeEvent()
    {
        using var server = new ThreadedHttpServer("test", Limits(8, streams: 1), exchange =>
        {
            if (exchange.BeginStream(200, "text/event-stream") is not { } stream)
            {
                return;
            }

            for (var id = 1; !exchange.IsShed; id++)
            {
                stream.Write(Encoding.ASCII.GetBytes($"id: {id}\ndata: {id}\n\n"));
                Thread.Sleep(50);
            }
        });
        server.Start(0);
        using var first = await RawHttp.ConnectAsync(server.Port);
        await first.SendAsync(Encoding.ASCII.GetBytes(Get)).DefaultTimeout();
        var firstRead = new byte[64];
        await first.ReceiveAsync(firstRead).DefaultTimeout();

        using var second = await RawHttp.ConnectAsync(server.Port);
        await second.SendAsync(Encoding.ASCII.GetBytes(Get)).DefaultTimeout();
        var firstAll = await RawHttp.ReadUntilClosedAsync(first);
        var secondRead = new byte[256];
        var secondGot = await second.ReceiveAsync(secondRead).DefaultTimeout();

        Assert.EndsWith("\n\n", firstAll, StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 200 ", Encoding.ASCII.GetString(secondRead, 0, secondGot), StringComparison.Ordinal);
    }

    /// <summary>A long request (a capture) waiting for a result frees its slot once its client goes: the next long request gets it.</summary>
    [Fact]
    public async Task ALongRequest_FreesItsSlot_WhenItsClientGoes()
    {
        var admitted = 0;
        using var server = new ThreadedHttpServer("test", Limits(8, streams: 1), exchange =>
        {
            if (!exchange.BeginLong())
            {
                return;
            }

            Interlocked.Increment(ref admitted);
            var waited = Stopwatch.StartNew();
            while (!exchange.ClientHasGone() && waited.Elapsed < TimeoutExtensions.Default)
            {
                Thread.Sleep(50);
            }
        });
        server.Start(0);
        using (var leaving = await RawHttp.ConnectAsync(server.Port))
        {
            await leaving.SendAsync(Encoding.ASCII.GetBytes(Get)).DefaultTimeout();
            Assert.True(await Poll.UntilAsync(() => Volatile.Read(ref admitted) == 1, TimeoutExtensions.Default));
        }

        Assert.True(await Poll.UntilAsync(() => server.Connections == 0, TimeSpan.FromSeconds(2)), "the long request kept its slot after its client left");
        using var next = await RawHttp.ConnectAsync(server.Port);
        await next.SendAsync(Encoding.ASCII.GetBytes(Get)).DefaultTimeout();

        Assert.True(await Poll.UntilAsync(() => Volatile.Read(ref admitted) == 2, TimeoutExtensions.Default), "the next long request was refused");
    }

    private static OffPoolLimits Limits(int connections, int streams = 0, TimeSpan? firstByte = null) =>
        new() { MaxConnections = connections, MaxStreams = streams, FirstByteTimeout = firstByte ?? TimeSpan.FromSeconds(5) };

    private static ThreadedHttpServer Started(OffPoolLimits limits)
    {
        var server = new ThreadedHttpServer("test", limits, exchange => exchange.Respond(200, "text/plain", "ok"));
        server.Start(0);
        return server;
    }

    /// <summary>Keeps every log line, formatted.</summary>
    internal sealed class ListLogger : ILogger
    {
        private readonly List<string> _lines = [];

        public IReadOnlyList<string> Lines
        {
            get
            {
                lock (_lines)
                {
                    return [.. _lines];
                }
            }
        }

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            lock (_lines)
            {
                _lines.Add(formatter(state, exception));
            }
        }
    }
}
