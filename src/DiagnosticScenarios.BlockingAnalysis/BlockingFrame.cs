using System.Text.Json.Serialization;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>The kinds of call that park a thread.</summary>
[JsonConverter(typeof(JsonStringEnumConverter<BlockingKind>))]
public enum BlockingKind
{
    /// <summary><c>Task.Result</c>, <c>Task.Wait</c> and the runtime's wait beneath them.</summary>
    TaskWait,

    /// <summary><c>GetAwaiter().GetResult()</c> on an unfinished task.</summary>
    GetAwaiterGetResult,

    /// <summary><c>Thread.Sleep</c>.</summary>
    Sleep,

    /// <summary><c>lock</c>, <c>Monitor.Enter</c> and <c>Monitor.Wait</c>.</summary>
    Monitor,

    /// <summary><c>SemaphoreSlim.Wait</c>.</summary>
    SemaphoreSlim,

    /// <summary><c>ManualResetEventSlim.Wait</c> called directly.</summary>
    ManualResetEventSlim,

    /// <summary><c>WaitHandle.WaitOne</c> and friends.</summary>
    WaitHandle,

    /// <summary><c>Thread.Join</c>.</summary>
    ThreadJoin,

    /// <summary>A blocking socket call (read, write, connect, accept).</summary>
    SocketRead,

    /// <summary>A blocking file or pipe read.</summary>
    StreamRead,

    /// <summary>A pool worker with nothing to do, waiting for work: not blocked by the app.</summary>
    IdleWorker,
}

/// <summary>The call a group of threads is parked in: its kind, a name a reader knows, and the frame that matched.</summary>
public sealed record BlockingFrame(BlockingKind Kind, string Name, string Frame)
{
    /// <summary>"Task.Result / Wait (sync-over-async) (Task`1.GetResultCore)"; the name alone where the frame says no more ("Thread.Sleep").</summary>
    public override string ToString() => Name == Frame ? Name : $"{Name} ({Frame})";

    /// <summary>The fix for a blocking call made inside a delegate handed to <c>Task.Run</c>, whatever its kind: the blocking moved, it did not go.</summary>
    public const string TaskRunFix = "Task.Run around a blocking call only moves it to another pool thread: call the I/O's async API and await it (/api/diagscenario/taskrunwait → taskasyncwait)";

    private const string TaskWaitName = "Task.Result / Wait (sync-over-async)";
    private const string GetResultName = "GetAwaiter().GetResult() (sync-over-async)";

    // Outermost first matters: the first of these found walking from the thread's root towards its leaf is the call
    // the code made; what follows it (Task.Result -> SpinThenBlockingWait -> ManualResetEventSlim.Wait -> Monitor.Wait) is how it waits.
    private static readonly (string Prefix, BlockingKind Kind, string Name)[] Patterns =
    [
        ("System.Threading.PortableThreadPool+WorkerThread.WorkerDoWork", BlockingKind.IdleWorker, "idle pool worker (waiting for work)"),
        ("System.Threading.LowLevelLifoSemaphore.", BlockingKind.IdleWorker, "idle pool worker (waiting for work)"),
        ("System.Runtime.CompilerServices.TaskAwaiter.GetResult", BlockingKind.GetAwaiterGetResult, GetResultName),
        ("System.Runtime.CompilerServices.TaskAwaiter.HandleNonSuccessAndDebuggerNotification", BlockingKind.GetAwaiterGetResult, GetResultName),
        ("System.Runtime.CompilerServices.TaskAwaiter`1.GetResult", BlockingKind.GetAwaiterGetResult, GetResultName),
        ("System.Runtime.CompilerServices.ValueTaskAwaiter.GetResult", BlockingKind.GetAwaiterGetResult, GetResultName),
        ("System.Runtime.CompilerServices.ValueTaskAwaiter`1.GetResult", BlockingKind.GetAwaiterGetResult, GetResultName),
        ("System.Runtime.CompilerServices.ConfiguredTaskAwaitable+ConfiguredTaskAwaiter.GetResult", BlockingKind.GetAwaiterGetResult, GetResultName),
        ("System.Runtime.CompilerServices.ConfiguredTaskAwaitable`1+ConfiguredTaskAwaiter.GetResult", BlockingKind.GetAwaiterGetResult, GetResultName),
        ("System.Threading.Tasks.Task`1.get_Result", BlockingKind.TaskWait, TaskWaitName),
        ("System.Threading.Tasks.Task`1.GetResultCore", BlockingKind.TaskWait, TaskWaitName),
        ("System.Threading.Tasks.Task.Wait", BlockingKind.TaskWait, TaskWaitName),
        ("System.Threading.Tasks.Task.InternalWait", BlockingKind.TaskWait, TaskWaitName),
        ("System.Threading.Tasks.Task.SpinThenBlockingWait", BlockingKind.TaskWait, TaskWaitName),
        ("System.Threading.Thread.Sleep", BlockingKind.Sleep, "Thread.Sleep"),
        ("System.Threading.Thread.Join", BlockingKind.ThreadJoin, "Thread.Join"),
        ("System.Threading.Monitor.Enter", BlockingKind.Monitor, "lock / Monitor"),
        ("System.Threading.Monitor.ReliableEnter", BlockingKind.Monitor, "lock / Monitor"),
        ("System.Threading.Monitor.TryEnter", BlockingKind.Monitor, "lock / Monitor"),
        ("System.Threading.Monitor.Wait", BlockingKind.Monitor, "Monitor.Wait"),
        ("System.Threading.Lock.Enter", BlockingKind.Monitor, "lock / Monitor"),
        ("System.Threading.SemaphoreSlim.Wait", BlockingKind.SemaphoreSlim, "SemaphoreSlim.Wait"),
        ("System.Threading.ManualResetEventSlim.Wait", BlockingKind.ManualResetEventSlim, "ManualResetEventSlim.Wait"),
        ("System.Threading.WaitHandle.Wait", BlockingKind.WaitHandle, "WaitHandle.WaitOne / WaitAll / WaitAny"),
        ("System.Net.Sockets.Socket.Receive", BlockingKind.SocketRead, "socket read"),
        ("System.Net.Sockets.Socket.Send", BlockingKind.SocketRead, "socket write"),
        ("System.Net.Sockets.Socket.Poll", BlockingKind.SocketRead, "socket read"),
        ("System.Net.Sockets.Socket.Connect", BlockingKind.SocketRead, "socket connect"),
        ("System.Net.Sockets.Socket.Accept", BlockingKind.SocketRead, "socket accept"),
        ("System.Net.Sockets.NetworkStream.Read", BlockingKind.SocketRead, "socket read"),
        ("System.IO.FileStream.Read", BlockingKind.StreamRead, "file read"),
        ("System.IO.RandomAccess.Read", BlockingKind.StreamRead, "file read"),
        ("System.IO.Pipes.PipeStream.Read", BlockingKind.StreamRead, "pipe read"),
    ];

    private const string WorkItemDispatch = "System.Threading.ThreadPoolWorkQueue.Dispatch";

    private const string ChannelFix =
        "await the signal (a TaskCompletionSource, or a Channel for items) instead of waiting on an event (/api/blocking/blockingcollection → channel)";

    // APIs whose block is inside the framework, under another kind's wait: the fix is the API's, named by the call the app
    // made (the frame just above the app's innermost one), whatever the wait beneath it.
    private static readonly (string Call, string Fix)[] CallFixes =
    [
        ("HttpClient.Send", "call HttpClient.SendAsync with the request's CancellationToken and await it (/api/blocking/httpclient → httpclient-async)"),
        ("StreamReader.Read", "read with the …Async twin (ReadToEndAsync) and await it, and AllowSynchronousIO can stay off (/api/blocking/bodyread → bodyread-async)"),
        ("BlockingCollection`1.", "hand the items over through a Channel and await its reader's ReadAsync: BlockingCollection has no async Take (/api/blocking/blockingcollection → channel)"),
    ];

    // A wait in a delegate the DI container calls to build a service: the container cannot await it. The container calls
    // it through its call-site resolver (ServiceLookup) until the service has been resolved twice, then through the
    // resolver it compiles for it, a dynamic method of its own module (Microsoft.Extensions.DependencyInjection!dynamicClass.ResolveService):
    // under load almost every call after the first few.
    private const string ContainerFrames = "Microsoft.Extensions.DependencyInjection.ServiceLookup.";
    private const string ContainerCompiledResolver = "Microsoft.Extensions.DependencyInjection!dynamicClass.ResolveService(";

    private const string ContainerFix =
        "a DI factory cannot await: inject what loads the value and await the load in the request's async code (/api/blocking/difactory → difactory-async)";

    /// <summary>
    /// The fix for a thread parked in <paramref name="blocking"/>, in one line, with the scenario pair that shows it: Task.Run's
    /// when the app's frames run in a delegate handed to it; the API's when the app called one that blocks inside
    /// (<c>HttpClient.Send</c>, <c>StreamReader.ReadToEnd</c>, <c>BlockingCollection.Take</c>); the container's when the wait is
    /// in a DI factory; the call's async twin when the wait is inside another library's synchronous method the app called
    /// (<see cref="LibraryCallFix"/>); the app method's async twin when the app's innermost method sleeps and its type has
    /// one (<see cref="AsyncTwinFix"/>); else the kind's (<see cref="FixFor(BlockingKind)"/>). Null when it is not parked in a known call, or waits
    /// inside an awaited call the app made (<see cref="IsAwaitedCall"/>).
    /// </summary>
    /// <param name="framesLeafFirst">The thread's stack.</param>
    /// <param name="appFrame">The app's innermost frame, or null when the stack has none.</param>
    /// <param name="underTaskRun">Whether the app's frames run in a delegate handed to <c>Task.Run</c>.</param>
    public static string? FixFor(BlockingFrame? blocking, IReadOnlyList<string> framesLeafFirst, AppFrame? appFrame, bool underTaskRun)
    {
        ArgumentNullException.ThrowIfNull(framesLeafFirst);
        var at = IndexOfApp(framesLeafFirst, appFrame);
        var call = CallAt(framesLeafFirst, at);
        if (blocking is null || IsAwaitedCall(call))
        {
            return null;
        }

        // A lock or a throttle taken inside Task.Run is still the lock's to fix: the wait, not the I/O, is the block.
        if (underTaskRun && blocking.Kind is not (BlockingKind.Monitor or BlockingKind.SemaphoreSlim))
        {
            return TaskRunFix;
        }

        if (call is not null && Array.Find(CallFixes, c => call.StartsWith(c.Call, StringComparison.Ordinal)) is { Fix: { } callFix })
        {
            return callFix;
        }

        if (at >= 0 && at + 1 < framesLeafFirst.Count && blocking.Kind is BlockingKind.TaskWait or BlockingKind.GetAwaiterGetResult
            && IsContainer(framesLeafFirst[at + 1]))
        {
            return ContainerFix;
        }

        if (blocking.Kind == BlockingKind.Sleep && (appFrame?.Inlined ?? appFrame) is { AsyncTwin: { } twin } sleeper)
        {
            return AsyncTwinFix(sleeper.Method, twin);
        }

        return LibraryCallFix(framesLeafFirst, at, call) ?? FixFor(blocking.Kind);
    }

    /// <summary>
    /// The fix for an app method that parks its thread where its type offers an asynchronous twin (a driver's two faces:
    /// <c>MockDatabase.Query</c> sleeps as a blocking read does, <c>QueryAsync</c> awaits): its callers call the twin.
    /// </summary>
    public static string AsyncTwinFix(string method, string twin) =>
        $"{method} blocks its thread and its type has an async twin, {twin}: call that with the request's CancellationToken and await it (/api/diagscenario/syncio → taskasyncwait)";

    /// <summary>
    /// The fix for a wait inside a library's synchronous method that the app called, a few frames above the primitive it
    /// parks in: <c>SqlConnection.Open</c> queued in its connection pool's <c>WaitHandle</c>, <c>SqlCommand.ExecuteNonQuery</c>
    /// in a socket read. The wait is the library's own, so the primitive's fix (a Channel for an event) is not the app's:
    /// the call's async twin is. Null when the app called the primitive itself, or a threading type whose waits are their
    /// kind's (<c>CountdownEvent.Wait</c>, <c>Parallel.For</c>), or a constructor, an accessor or a lambda, which have no twin.
    /// </summary>
    private static string? LibraryCallFix(IReadOnlyList<string> framesLeafFirst, int at, string? call)
    {
        if (call is null || FindIndex(framesLeafFirst) is not { } parkedAt || parkedAt >= at - 1)
        {
            return null;
        }

        var method = FrameNames.Method(framesLeafFirst[at - 1]);
        var name = call[(call.LastIndexOf('.') + 1)..];
        if (method.StartsWith(ThreadingTypes, StringComparison.Ordinal) || method.EndsWith("..ctor", StringComparison.Ordinal)
            || method.EndsWith("..cctor", StringComparison.Ordinal) || name.StartsWith("get_", StringComparison.Ordinal)
            || name.StartsWith("set_", StringComparison.Ordinal) || name.Length == 0 || !char.IsLetter(name[0]))
        {
            return null;
        }

        return $"the wait is inside {call}: call its async twin, {name}Async, with the request's CancellationToken and await it (/api/sqlscenario/sync → async)";
    }

    private const string ThreadingTypes = "System.Threading.";

    /// <summary>The call the app's innermost frame made (<c>Type.Method</c>), or null when the stack ends in it or has no app frame.</summary>
    public static string? CallMadeBy(IReadOnlyList<string> framesLeafFirst, AppFrame? appFrame)
    {
        ArgumentNullException.ThrowIfNull(framesLeafFirst);
        return CallAt(framesLeafFirst, IndexOfApp(framesLeafFirst, appFrame));
    }

    // The call the frame at `at` makes (the frame just before it, leaf first), or null when it is the leaf or missing (-1).
    private static string? CallAt(IReadOnlyList<string> framesLeafFirst, int at) =>
        at > 0 ? FrameNames.TypeAndMethod(framesLeafFirst[at - 1]) : null;

    /// <summary>
    /// Whether <paramref name="appCall"/>, the call the app's innermost frame made, is an awaited <c>…Async</c> one, or one of
    /// the Task methods an app awaits whose names do not say so (<c>Task.Delay</c>, <c>WhenAll</c>, <c>WhenAny</c>): a thread
    /// waiting inside it (a driver's lock, SemaphoreSlim.WaitAsync's own, the timer queue's under Task.Delay) waits on the
    /// library's business for a moment, not on a blocking call of the app's, and no fix of the app's applies.
    /// </summary>
    public static bool IsAwaitedCall(string? appCall) =>
        appCall is not null && (FrameNames.IsAsyncMethod(appCall) || AwaitedTaskMethods.Contains(appCall, StringComparer.Ordinal));

    private static readonly string[] AwaitedTaskMethods = ["Task.Delay", "Task.WhenAll", "Task.WhenAny"];

    private static bool IsContainer(string frame) =>
        FrameNames.Method(frame).StartsWith(ContainerFrames, StringComparison.Ordinal)
        || frame.StartsWith(ContainerCompiledResolver, StringComparison.Ordinal);

    // Where the app's innermost frame is in the stack, leaf first; -1 when there is none. A frame named back from code the
    // JIT inlined into a method compiled at run time (ASP.NET Core's invoker) stands where that method is.
    private static int IndexOfApp(IReadOnlyList<string> framesLeafFirst, AppFrame? appFrame)
    {
        for (var i = 0; appFrame is not null && i < framesLeafFirst.Count; i++)
        {
            if (FrameNames.TypeAndMethod(framesLeafFirst[i]) == appFrame.Method)
            {
                return i;
            }
        }

        for (var i = 0; appFrame is not null && i < framesLeafFirst.Count; i++)
        {
            if (FrameNames.IsCompiledAtRunTime(framesLeafFirst[i]))
            {
                return i;
            }
        }

        return -1;
    }

    /// <summary>
    /// The fix for a kind of blocking call, in one line, with the scenario pair that shows it (BAD route → GOOD route);
    /// null for an idle worker, which is not blocked.
    /// </summary>
    public static string? FixFor(BlockingKind kind) => kind switch
    {
        BlockingKind.TaskWait or BlockingKind.GetAwaiterGetResult =>
            "make the caller async and await the task (/api/diagscenario/taskwait → taskasyncwait)",
        BlockingKind.Sleep =>
            "await the task, or Task.Delay, instead of sleeping until it is done (/api/diagscenario/tasksleepwait → taskasyncwait)",
        BlockingKind.SocketRead or BlockingKind.StreamRead =>
            "call the driver's …Async twin with the request's CancellationToken and await it (/api/sqlscenario/sync → async)",
        BlockingKind.Monitor =>
            "hold no lock across a wait: a SemaphoreSlim(1) taken with await WaitAsync (/api/blocking/lock → lock-async)",
        BlockingKind.SemaphoreSlim =>
            "await SemaphoreSlim.WaitAsync instead of Wait (/api/blocking/semaphore → semaphore-async)",
        BlockingKind.ManualResetEventSlim or BlockingKind.WaitHandle => ChannelFix,
        BlockingKind.ThreadJoin =>
            "run the work as a Task and await it instead of joining its thread (/api/diagscenario/taskwait → taskasyncwait)",
        _ => null,
    };

    /// <summary>The outermost blocking call in a stack given leaf first; null when the thread is not parked in a known call (e.g. running).</summary>
    /// <remarks>
    /// The patterns are prefixes, so that <c>Socket.Receive</c> covers <c>ReceiveFrom</c> and <c>WaitHandle.Wait</c> covers
    /// <c>WaitOne</c> and <c>WaitAny</c>; an async method (<see cref="FrameNames.IsAsyncMethod"/>, e.g. <c>NetworkStream.ReadAsync</c>)
    /// never blocks, and a thread sampled while running in one is not parked there.
    /// </remarks>
    public static BlockingFrame? Find(IReadOnlyList<string> framesLeafFirst) =>
        FindIndex(framesLeafFirst) is { } index ? Match(FrameNames.Method(framesLeafFirst[index]), framesLeafFirst[index]) : null;

    /// <summary>Where <see cref="Find"/>'s frame is in the stack (leaf first), or null.</summary>
    public static int? FindIndex(IReadOnlyList<string> framesLeafFirst)
    {
        ArgumentNullException.ThrowIfNull(framesLeafFirst);
        for (var i = framesLeafFirst.Count - 1; i >= 0; i--)
        {
            var method = FrameNames.Method(framesLeafFirst[i]);
            if (!FrameNames.IsAsyncMethod(method) && Match(method, framesLeafFirst[i]) is { } match
                && !(match.Kind == BlockingKind.IdleWorker && IsDispatchingAbove(framesLeafFirst, i)))
            {
                return i;
            }
        }

        return null;
    }

    // The pool's work loop keeps a frame of its own where CoreLib runs jitted (DOTNET_ReadyToRun=0), under every worker: it
    // is idle only while it waits, not while it runs a work item through the queue's dispatch, nearer the leaf.
    private static bool IsDispatchingAbove(IReadOnlyList<string> framesLeafFirst, int index)
    {
        for (var i = index - 1; i >= 0; i--)
        {
            if (FrameNames.Method(framesLeafFirst[i]).StartsWith(WorkItemDispatch, StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }

    private static BlockingFrame? Match(string method, string frame)
    {
        foreach (var (prefix, kind, name) in Patterns)
        {
            if (method.StartsWith(prefix, StringComparison.Ordinal))
            {
                return new BlockingFrame(kind, name, FrameNames.TypeAndMethod(frame));
            }
        }

        return null;
    }
}
