namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// Reads the frame names TraceEvent gives (<c>module!Namespace.Type.Method(args)</c>): the short <c>Type.Method</c>
/// a reader looks for, and whether a stack is a thread-pool worker's.
/// </summary>
public static partial class FrameNames
{
    // The bottom of every managed thread-pool worker: the portable pool's worker loop and the queue it drains.
    private static readonly string[] PoolDispatchMarkers =
    [
        "System.Threading.ThreadPoolWorkQueue.Dispatch",
        "System.Threading.PortableThreadPool+WorkerThread.",
        "System.Threading.PortableThreadPool.WorkerThread.",
    ];

    /// <summary>The method with its namespace, without the module, the parameters and generic instantiations (<c>Task`1.get_Result</c>).</summary>
    public static string Method(string frame)
    {
        ArgumentNullException.ThrowIfNull(frame);
        var start = frame.IndexOf('!', StringComparison.Ordinal) + 1;
        var end = frame.IndexOf('(', start);
        var method = end < 0 ? frame.AsSpan(start) : frame.AsSpan(start, end - start);
        if (!method.Contains('['))
        {
            return method.ToString();
        }

        var builder = new System.Text.StringBuilder(method.Length);
        var depth = 0;
        foreach (var c in method)
        {
            depth += c switch { '[' => 1, ']' => -1, _ => 0 };
            if (depth == 0 && c != ']')
            {
                builder.Append(c);
            }
        }

        return builder.ToString();
    }

    /// <summary>
    /// <c>Type.Method</c>: what a reader searches the code for, e.g. <c>StarvationScenariosController.TaskWait</c>. A type
    /// declared <c>file</c> is named as it is declared, without the compiler's prefix of its file's name and checksum
    /// (<c>&lt;GeneratedRouteBuilderExtensions_g&gt;F3657…__GeneratedRouteBuilderExtensionsCore</c>, the handlers
    /// ASP.NET Core's request delegate generator writes into a minimal API app). An async method's body, which runs in
    /// the state machine the compiler made of it (<c>OrderService+&lt;GetAsync&gt;d__3.MoveNext</c>), is named by the
    /// method (<c>OrderService.GetAsync</c>), as a debugger's call stack names it; its line is that of the body.
    /// </summary>
    public static string TypeAndMethod(string frame)
    {
        var method = FileLocalTypePrefix().Replace(Method(frame), "");
        var methodDot = LastDotOutsideBrackets(method, method.Length);
        if (methodDot < 0)
        {
            return method;
        }

        var typeDot = LastDotOutsideBrackets(method, methodDot);
        return AsyncMethodBody().Replace(method[(typeDot + 1)..], "${type}.${method}");
    }

    // An async method's state machine (the type, then <Method>d__N) and its MoveNext; not a lambda's or a local function's.
    [System.Text.RegularExpressions.GeneratedRegex(@"^(?<type>.+)\+<(?<method>[A-Za-z_][A-Za-z0-9_]*)>d__\d+\.MoveNext$")]
    private static partial System.Text.RegularExpressions.Regex AsyncMethodBody();

    // The metadata name of a file-local type: <FileName>F, the SHA-256 of the file's path in hexadecimal, two underscores.
    [System.Text.RegularExpressions.GeneratedRegex("<[^<>]+>F[0-9A-F]{64}__")]
    private static partial System.Text.RegularExpressions.Regex FileLocalTypePrefix();

    /// <summary>
    /// A method named <c>…Async</c> (<c>Socket.SendAsync</c>, <c>SemaphoreSlim.WaitAsync</c>, <c>NpgsqlCommand.ExecuteNonQueryAsync</c>),
    /// or <c>…AsyncCore</c> and the like beneath one (<c>SemaphoreSlim.WaitAsyncCore</c>):
    /// it hands its thread back instead of blocking, so a thread sampled inside one is running, not parked by its caller.
    /// </summary>
    /// <param name="method">A method name as <see cref="Method"/> or <see cref="TypeAndMethod"/> gives it.</param>
    public static bool IsAsyncMethod(string method)
    {
        ArgumentNullException.ThrowIfNull(method);
        // The async method's own name, or its core beneath the public one: SemaphoreSlim.WaitAsyncCore takes the semaphore's
        // lock for a moment, which a match on "SemaphoreSlim.Wait" would report as a synchronous semaphore wait.
        var name = method.AsSpan(method.LastIndexOf('.') + 1);
        var async = name.LastIndexOf("Async", StringComparison.Ordinal);
        return async >= 0 && (async + "Async".Length == name.Length || char.IsUpper(name[async + "Async".Length]));
    }

    /// <summary>
    /// A method compiled at run time without the number that tells its copies apart (<c>dynamicClass.lambda_method</c>):
    /// the first requests to reach an action of a cold app at once may each compile its invoker, the same code, numbered
    /// apart (<c>lambda_method42</c>, <c>lambda_method43</c>, …).
    /// </summary>
    /// <param name="invoker">A method compiled at run time, as <see cref="InlinedInvoker.Method"/> names it.</param>
    public static string WithoutCopyNumber(string invoker) => CompiledCopyNumber().Replace(invoker, "lambda_method");

    /// <summary>Whether a method compiled at run time carries the number that tells it from the others (<c>lambda_method12</c>).</summary>
    public static bool IsNumberedCompiledMethod(string frame) => CompiledCopyNumber().IsMatch(frame);

    [System.Text.RegularExpressions.GeneratedRegex(@"lambda_method\d+")]
    private static partial System.Text.RegularExpressions.Regex CompiledCopyNumber();

    /// <summary>Whether the frame is a method compiled at run time (<c>dynamicClass.lambda_method12</c>, an expression tree's).</summary>
    public static bool IsCompiledAtRunTime(string frame) => Method(frame).StartsWith("dynamicClass.", StringComparison.Ordinal);

    /// <summary>A stack (leaf first) of a thread-pool worker.</summary>
    public static bool IsPoolWorker(IEnumerable<string> frames) =>
        frames.Any(f => PoolDispatchMarkers.Any(m => Method(f).StartsWith(m, StringComparison.Ordinal)));

    private static int LastDotOutsideBrackets(string text, int before)
    {
        var depth = 0;
        for (var i = before - 1; i >= 0; i--)
        {
            switch (text[i])
            {
                case '>':
                    depth++;
                    break;
                case '<':
                    depth--;
                    break;
                case '.' when depth == 0:
                    return i;
            }
        }

        return -1;
    }
}
