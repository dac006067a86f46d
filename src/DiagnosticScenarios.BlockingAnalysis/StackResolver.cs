using Microsoft.Diagnostics.Tracing.Etlx;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>One managed frame of a sampled or event stack, with what the trace says about its module and address.</summary>
/// <param name="Name"><c>module!Namespace.Type.Method(args)</c>, as TraceEvent names it.</param>
/// <param name="ModuleName">The module's name, e.g. <c>System.Private.CoreLib</c>.</param>
/// <param name="ModulePath">The module's file; null for methods compiled at run time (<c>lambda_method</c>).</param>
/// <param name="MethodName">The method with its namespace and parameters.</param>
/// <param name="Address">The instruction: where the leaf runs, or a return address for every other frame.</param>
internal readonly record struct TraceFrame(string Name, string ModuleName, string? ModulePath, string MethodName, ulong Address)
{
    public bool IsDynamic => ModulePath is null;
}

/// <summary>
/// A stack read for the report: its frames' names, the app's innermost run of frames with their lines, and the method
/// compiled at run time that the JIT inlined the app's code into: all of it when the run is empty, or the caller of the
/// run (the action) when the run ends in such a method.
/// </summary>
internal sealed record ResolvedStack(IReadOnlyList<string> Names, IReadOnlyList<AppFrame> AppFrames, InlinedInvoker? InlinedInto, bool UnderTaskRun)
{
    /// <summary>The app's frames further out than its innermost run (past a framework frame between them), each with its line.</summary>
    public IReadOnlyList<AppFrame> OuterAppFrames { get; init; } = [];

    /// <summary>Groups threads parked on the same line the same way, whatever else their stacks share.</summary>
    public string Key => string.Join('\n', Names) + "#" + string.Join('|', AppFrames.Select(f => f.Source?.ToString()));
}

/// <summary>
/// Reads the stacks of a trace: which frames are the app's (<see cref="AppCode"/>), the file and line of each app frame
/// (<see cref="NativeCodeMaps"/>, <see cref="SourceLines"/>), and, where the JIT inlined the app's code into a method
/// compiled at run time, that method.
/// </summary>
internal sealed class StackResolver : IDisposable
{
    private readonly NativeCodeMaps _maps;
    private readonly ModuleReaders _modules = new();
    private readonly SourceLines _sources;
    private readonly AppCode _app;
    private readonly Dictionary<(ulong Address, string? Callee, bool Innermost), AppFrame> _described = [];

    public StackResolver(TraceLog log, string nettracePath, DiagnosisOptions options)
    {
        _maps = NativeCodeMaps.Read(nettracePath);
        var coreLib = log.ModuleFiles.FirstOrDefault(m => string.Equals(Path.GetFileNameWithoutExtension(m.FilePath), "System.Private.CoreLib", StringComparison.OrdinalIgnoreCase));
        _sources = new SourceLines(_modules);
        _app = new AppCode(options.AppPrefixes, coreLib?.FilePath, _modules, _maps.AssemblyOf);
    }

    /// <summary>The modules met so far and whether each is the app's.</summary>
    public IReadOnlyList<ModuleVerdict> Modules => _app.Verdicts;

    /// <summary>
    /// The managed frames of a stack, leaf first; frames the trace cannot name are left out. A module's file and name are
    /// the loader's spelling (<see cref="NativeCodeMaps.LoadedPath"/>), not TraceLog's lowercased one.
    /// </summary>
    public List<TraceFrame> Frames(TraceCallStack? stack)
    {
        var frames = new List<TraceFrame>();
        for (; stack is not null; stack = stack.Caller)
        {
            var address = stack.CodeAddress;
            var method = address.FullMethodName;
            if (string.IsNullOrEmpty(method))
            {
                continue;
            }

            var tracePath = address.ModuleFile?.FilePath;
            var path = string.IsNullOrEmpty(tracePath) || !Path.IsPathRooted(tracePath) ? null : _maps.LoadedPath(tracePath);
            var module = path is not null && path != tracePath && string.Equals(address.ModuleName, Path.GetFileNameWithoutExtension(path), StringComparison.OrdinalIgnoreCase)
                ? Path.GetFileNameWithoutExtension(path)
                : address.ModuleName;
            frames.Add(new TraceFrame($"{module}!{method}", module, path, method, address.Address));
        }

        return frames;
    }

    /// <summary>Names, the app's innermost run of frames with their lines, and where its code went when the run is missing.</summary>
    /// <remarks>
    /// The walk goes from the leaf towards the root and stops at the first method compiled at run time: ASP.NET Core's
    /// invokers (<c>lambda_method</c>) call the app's actions, so app frames below one (its middleware) did not make the
    /// call. When that method comes first, the JIT inlined the app's code into it: a Release build's small action.
    /// </remarks>
    public ResolvedStack Resolve(IReadOnlyList<TraceFrame> frames)
    {
        var names = frames.Select(f => f.Name).ToList();

        // Every module of the stack gets its verdict, so the report lists them all, not only those above an invoker.
        foreach (var frame in frames)
        {
            _app.IsApp(frame);
        }

        var start = -1;
        for (var i = 0; i < frames.Count; i++)
        {
            if (frames[i].IsDynamic)
            {
                break;
            }

            if (_app.IsApp(frames[i]))
            {
                start = i;
                break;
            }
        }

        if (start < 0)
        {
            return new ResolvedStack(names, [], InlinedInto(frames, names), UnderTaskRun: false);
        }

        var appFrames = new List<AppFrame>();
        var end = start;
        for (; end < frames.Count && _app.IsApp(frames[end]); end++)
        {
            appFrames.Add(Describe(frames[end], callee: end == 0 ? null : frames[end - 1], innermost: end == start));
        }

        var underTaskRun = end < frames.Count && FrameNames.Method(frames[end].Name) is var caller
            && (caller.StartsWith("System.Threading.Tasks.Task.InnerInvoke", StringComparison.Ordinal)
                || caller.StartsWith("System.Threading.Tasks.Task`1.InnerInvoke", StringComparison.Ordinal));

        // Called by a method compiled at run time from an optimized module: the action that made this call may have been
        // inlined there (a Debug build's never is).
        var inlinedInto = end < frames.Count && frames[end].IsDynamic && _app.IsOptimized(frames[end - 1].ModulePath) ? Invoker(frames, end) : null;
        return new ResolvedStack(names, appFrames, inlinedInto, underTaskRun) { OuterAppFrames = OuterAppFrames(frames, end) };
    }

    // Every app frame past the innermost run, up to the first method compiled at run time (ASP.NET Core's invoker; what lies
    // below it, middleware, did not make the call): the caller that handed work to the framework (Task.Run whose task the
    // waiting thread ran inline, a List.ForEach), with the line of its call.
    private List<AppFrame> OuterAppFrames(IReadOnlyList<TraceFrame> frames, int from)
    {
        var outer = new List<AppFrame>();
        for (var i = from; i < frames.Count && !frames[i].IsDynamic; i++)
        {
            if (_app.IsApp(frames[i]))
            {
                outer.Add(Describe(frames[i], callee: frames[i - 1], innermost: false));
            }
        }

        return outer;
    }

    public void Dispose()
    {
        _sources.Dispose();
        _modules.Dispose();
    }

    // A frame at one code address calling one method reads the same every time: a wait trace holds thousands of stacks
    // through the same few addresses, so each is read from the maps and the PDB once.
    private AppFrame Describe(TraceFrame frame, TraceFrame? callee, bool innermost)
    {
        var key = (frame.Address, callee?.Name, innermost);
        if (frame.Address == 0)
        {
            return DescribeOnce(frame, callee, innermost);
        }

        if (!_described.TryGetValue(key, out var described))
        {
            described = DescribeOnce(frame, callee, innermost);
            _described[key] = described;
        }

        return described;
    }

    private AppFrame DescribeOnce(TraceFrame frame, TraceFrame? callee, bool innermost)
    {
        var method = FrameNames.TypeAndMethod(frame.Name);
        if (_maps.Find(frame.Address, isLeaf: callee is null) is not { } location)
        {
            return new AppFrame(method, null, _sources.IsReadyToRun(frame.ModulePath)
                ? $"{Path.GetFileName(frame.ModulePath)} is precompiled (ReadyToRun) and the runtime maps no precompiled code to IL: for lines, run the app with DOTNET_ReadyToRun=0 while you diagnose it, so its code is jitted"
                : "the trace has no IL-to-native map for this code (recorded without the rundown's maps)");
        }

        var located = location.Module is null && frame.ModulePath is { } path ? location with { Module = ModuleFile.At(path) } : location;
        var (line, missing, inlined) = _sources.FindCall(located, callee is { } called ? FrameNames.Method(called.Name) : null);
        // The innermost frame's method, or the app method inlined into it, may have an async twin its fix names.
        return new AppFrame(method, line, missing) { Inlined = inlined, AsyncTwin = innermost && inlined is null ? _sources.AsyncTwin(located) : null };
    }

    // The method compiled at run time that made the blocking call (or called what made it), and its caller.
    private static InlinedInvoker? InlinedInto(IReadOnlyList<TraceFrame> frames, IReadOnlyList<string> names)
    {
        if (BlockingFrame.FindIndex(names) is not { } blocking)
        {
            return null;
        }

        for (var i = blocking + 1; i < frames.Count; i++)
        {
            if (frames[i].IsDynamic)
            {
                return Invoker(frames, i);
            }
        }

        return null;
    }

    private static InlinedInvoker Invoker(IReadOnlyList<TraceFrame> frames, int index) =>
        new(FrameNames.TypeAndMethod(frames[index].Name), index + 1 < frames.Count ? [FrameNames.TypeAndMethod(frames[index + 1].Name)] : []);
}

/// <summary>
/// The method compiled at run time (ASP.NET Core's <c>lambda_methodN</c>) that the JIT inlined the app's code into, and the
/// methods that called it: a site's threads reach one invoker from several (MVC's executor, its invoker).
/// </summary>
/// <param name="Method">The compiled method, e.g. <c>dynamicClass.lambda_method44</c>.</param>
/// <param name="CalledBy">Its callers, e.g. <c>ControllerActionInvoker.InvokeActionMethodAsync</c>; empty when the stack ends in it.</param>
public sealed record InlinedInvoker(string Method, IReadOnlyList<string> CalledBy)
{
    /// <summary>"dynamicClass.lambda_method44, called by A or B".</summary>
    public override string ToString() => CalledBy.Count == 0 ? Method : $"{Method}, called by {string.Join(" or ", CalledBy)}";

    /// <summary>One invoker for a site's stacks: the first one's method, every caller they came through.</summary>
    public static InlinedInvoker? Merge(IEnumerable<InlinedInvoker?> invokers)
    {
        var all = invokers.OfType<InlinedInvoker>().ToList();
        return all is [var first, ..] ? first with { CalledBy = [.. all.SelectMany(i => i.CalledBy).Distinct(StringComparer.Ordinal)] } : null;
    }
}
