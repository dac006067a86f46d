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

    /// <summary>The frames, leaf first.</summary>
    public IReadOnlyList<TraceFrame> Frames { get; init; } = [];

    /// <summary>Where <see cref="InlinedInto"/>'s method is in <see cref="Frames"/>; null when it is not set.</summary>
    public int? InvokerIndex { get; init; }

    /// <summary>
    /// How the app's frames the JIT inlined into <see cref="InlinedInto"/> were named back (from the endpoint each thread
    /// ran, or from the app's code); null when they were not, or did not need to be.
    /// </summary>
    public string? NamedFrom { get; init; }

    /// <summary>The blocking call <see cref="StackResolver.NameInlined"/> named (its module, method and IL offset) and how many calls fit as well.</summary>
    public NamedCall? Named { get; init; }

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
    private readonly Lazy<EndpointMethods> _endpoints;

    public StackResolver(TraceLog log, string nettracePath, DiagnosisOptions options)
        : this(NativeCodeMaps.Read(nettracePath, options.Locate), log.ModuleFiles.Select(m => m.FilePath), options)
    {
    }

    /// <summary>Resolves frames another source read (a dump's), with that source's code maps and module files.</summary>
    public StackResolver(NativeCodeMaps maps, IEnumerable<string?> moduleFiles, DiagnosisOptions options)
    {
        _maps = maps;
        var files = moduleFiles.Where(p => !string.IsNullOrEmpty(p) && Path.IsPathRooted(p)).Select(p => _maps.LoadedPath(p!)).ToList();
        var coreLib = files.FirstOrDefault(p => string.Equals(Path.GetFileNameWithoutExtension(p), "System.Private.CoreLib", StringComparison.OrdinalIgnoreCase));
        _sources = new SourceLines(_modules, options.SymbolFolders);
        _app = new AppCode(options.AppPrefixes, coreLib, _modules, _maps.AssemblyOf);
        _endpoints = new(() => new EndpointMethods(_modules, files.Where(_app.IsAppModule)));
    }

    /// <summary>The files and lines the resolver reads, for a source that names more than stacks (a dump's awaited tasks).</summary>
    public SourceLines Sources => _sources;

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
            var invoker = InvokerIndex(frames, names);
            return new ResolvedStack(names, [], invoker is { } at ? Invoker(frames, at) : null, UnderTaskRun: false) { Frames = frames, InvokerIndex = invoker };
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
        var inlined = end < frames.Count && frames[end].IsDynamic && _app.IsOptimized(frames[end - 1].ModulePath);
        return new ResolvedStack(names, appFrames, inlined ? Invoker(frames, end) : null, underTaskRun)
        {
            OuterAppFrames = OuterAppFrames(frames, end),
            Frames = frames,
            InvokerIndex = inlined ? end : null,
        };
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

    /// <summary>
    /// The stack with the app's code that a Release build's JIT inlined into ASP.NET Core's invoker named back: the endpoint's
    /// method and, down the calls its IL makes, the line of each call to the blocking one. The endpoint is the one the
    /// threads' labels name most (the app's own, or ASP.NET Core's endpoint log), or else the only endpoint of the app
    /// whose code makes that call. The stack as it was when it needs no naming or none can be found.
    /// </summary>
    /// <param name="labels">The endpoints the stack's threads were running, one per labelled thread.</param>
    /// <param name="threads">How many threads share the stack, labelled or not.</param>
    /// <param name="awaitedMethod">The async method whose task the threads wait on, where a dump shows it (<c>InvoiceSender.SendAsync</c>).</param>
    /// <param name="taken">Blocking calls other stacks of the same compiled code were named at, in another frame: left out while others fit.</param>
    public ResolvedStack NameInlined(ResolvedStack stack, IReadOnlyList<EndpointLabel> labels, int threads, string? awaitedMethod = null, IReadOnlyCollection<NamedCall>? taken = null)
    {
        if (stack.InvokerIndex is not { } invoker || invoker == 0 || stack.NamedFrom is not null)
        {
            return stack;
        }

        var callee = FrameNames.Method(stack.Frames[invoker - 1].Name);
        var target = (Callee: callee, stack.Frames[invoker - 1].ModulePath, AwaitedMethod: awaitedMethod, Taken: taken ?? []);
        foreach (var vote in labels.GroupBy(l => l.Name, StringComparer.Ordinal).OrderByDescending(g => g.Count()))
        {
            var code = vote.First().Method is { } method ? _endpoints.Value.At(method) is { } known ? [known] : [] : _endpoints.Value.Find(vote.Key);
            if (IsKept(stack, code))
            {
                return NothingInlined(stack);
            }

            if (Chains(code, target) is [var (endpoint, chain)])
            {
                var on = $"{vote.Count()} of {threads} thread{(threads == 1 ? "" : "s")}";
                return Named(stack, endpoint.Method.ModulePath, chain, callee, vote.First().Method is not null
                    ? vote.First().SeenAs is { } seenAs ? $"{endpoint.Name}, {seenAs} {on}" : $"{endpoint.Name}, which the app labelled {on} with"
                    : $"{endpoint.Name}, which ASP.NET Core logged running on {on}");
            }
        }

        var kind = stack.Frames.Skip(invoker + 1).Any(f => f.MethodName.StartsWith("Microsoft.AspNetCore.Mvc.", StringComparison.Ordinal))
            ? EndpointKind.ControllerAction
            : EndpointKind.MinimalApiHandler;
        var candidates = _endpoints.Value.All().Where(e => e.Kind == kind).ToList();
        if (stack.AppFrames.Count > 0 && candidates.Any(c => c.Name == stack.AppFrames[^1].Method))
        {
            return NothingInlined(stack);
        }

        return Chains(candidates, target) is [var (only, onlyChain)]
            ? Named(stack, only.Method.ModulePath, onlyChain, callee, $"{only.Name}, the app's only {(kind == EndpointKind.ControllerAction ? "action" : "endpoint handler")} whose code reaches {FrameNames.TypeAndMethod(stack.Frames[invoker - 1].Name)}")
            : stack;
    }

    // The endpoint's own method is the stack's outermost app frame: the JIT kept it, and nothing of the app is in the invoker.
    private static bool IsKept(ResolvedStack stack, IReadOnlyList<EndpointCode> endpoint) =>
        stack.AppFrames.Count > 0 && endpoint is [var only] && only.Name == stack.AppFrames[^1].Method;

    private static ResolvedStack NothingInlined(ResolvedStack stack) => stack with { InlinedInto = null, InvokerIndex = null };

    private List<(EndpointCode Endpoint, FittingChain Chain)> Chains(IEnumerable<EndpointCode> candidates, (string Callee, string? ModulePath, string? AwaitedMethod, IReadOnlyCollection<NamedCall> Taken) target) =>
        [.. candidates.Select(c => (Endpoint: c, Chain: _sources.ChainTo(c.Method.ModulePath, c.Method.MetadataToken, target.Callee, target.ModulePath, target.AwaitedMethod,
                target.Taken.Where(t => t.ModulePath == c.Method.ModulePath).Select(t => (t.MethodToken, t.IlOffset)).ToHashSet())))
            .Where(c => c.Chain is not null)
            .Select(c => (c.Endpoint, c.Chain!))];

    // The calls of the chain as app frames, innermost first, after the frames the stack kept.
    private ResolvedStack Named(ResolvedStack stack, string module, FittingChain fitting, string callee, string how)
    {
        var chain = fitting.Calls;
        var named = new List<AppFrame>(chain.Count);
        for (var i = chain.Count - 1; i >= 0; i--)
        {
            var location = new IlLocation(ModuleFile.At(module), chain[i].MethodToken, chain[i].IlOffset);
            var calls = i == chain.Count - 1 ? callee : chain[i + 1].Method;
            var (line, missing) = _sources.LineOfCall(location, calls);
            var innermost = i == chain.Count - 1 && stack.AppFrames.Count == 0;
            named.Add(new AppFrame(chain[i].Method, line, missing) { AsyncTwin = innermost ? _sources.AsyncTwin(location) : null, Tier = stack.InlinedInto?.Tier });
        }

        var fits = fitting.Fits == 1 ? "" : $"; the first of {fitting.Fits} calls in its code that this wait fits";
        return stack with { Named = new NamedCall(module, chain[^1].MethodToken, chain[^1].IlOffset, callee, fitting.Fits), AppFrames = [.. stack.AppFrames, .. named], NamedFrom = $"the JIT inlined {(named.Count == 1 ? "it" : "them")} into {stack.InlinedInto?.Method}; named from the endpoint {how}{fits}" };
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
        return new AppFrame(method, line, missing)
        {
            Inlined = inlined,
            AsyncTwin = innermost && inlined is null ? _sources.AsyncTwin(located) : null,
            Tier = _maps.TierAt(callee is null ? frame.Address : frame.Address - 1),
        };
    }

    // Where the method compiled at run time that made the blocking call (or called what made it) is, or null.
    private static int? InvokerIndex(IReadOnlyList<TraceFrame> frames, IReadOnlyList<string> names)
    {
        if (BlockingFrame.FindIndex(names) is not { } blocking)
        {
            return null;
        }

        for (var i = blocking + 1; i < frames.Count; i++)
        {
            if (frames[i].IsDynamic)
            {
                return i;
            }
        }

        return null;
    }

    private InlinedInvoker Invoker(IReadOnlyList<TraceFrame> frames, int index) =>
        new(FrameNames.TypeAndMethod(frames[index].Name), index + 1 < frames.Count ? [FrameNames.TypeAndMethod(frames[index + 1].Name)] : [])
        {
            Tier = _maps.TierAt(frames[index].Address - 1),
        };
}

/// <summary>
/// The method compiled at run time (ASP.NET Core's <c>lambda_methodN</c>) that the JIT inlined the app's code into, and the
/// methods that called it: a site's threads reach one invoker from several (MVC's executor, its invoker).
/// </summary>
/// <param name="Method">The compiled method, e.g. <c>dynamicClass.lambda_method44</c>.</param>
/// <param name="CalledBy">Its callers, e.g. <c>ControllerActionInvoker.InvokeActionMethodAsync</c>; empty when the stack ends in it.</param>
/// <summary>A blocking call named from an endpoint's IL: its module, method and IL offset, the frame it was named for, and how many calls fit as well.</summary>
internal sealed record NamedCall(string ModulePath, int MethodToken, int IlOffset, string Callee, int Fits);

public sealed record InlinedInvoker(string Method, IReadOnlyList<string> CalledBy)
{
    /// <summary>How the JIT had compiled the invoker (<c>OptimizedTier1</c>: tiered up, inlining on); null when the trace does not say.</summary>
    public string? Tier { get; init; }

    /// <summary>"dynamicClass.lambda_method44, called by A or B".</summary>
    public override string ToString() => CalledBy.Count == 0 ? Method : $"{Method}, called by {string.Join(" or ", CalledBy)}";

    /// <summary>One invoker for a site's stacks: the first one's method, every caller they came through.</summary>
    public static InlinedInvoker? Merge(IEnumerable<InlinedInvoker?> invokers)
    {
        var all = invokers.OfType<InlinedInvoker>().ToList();
        return all is [var first, ..] ? first with { CalledBy = [.. all.SelectMany(i => i.CalledBy).Distinct(StringComparer.Ordinal)] } : null;
    }
}
