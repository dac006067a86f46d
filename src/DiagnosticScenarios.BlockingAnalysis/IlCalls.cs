using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The calls a method's IL makes, read with System.Reflection.Metadata: where a frame calls the method above it, which app
/// method the JIT inlined on the way to a blocking call, and a method's asynchronous twin.
/// </summary>
internal sealed class IlCalls(ModuleReaders modules)
{
    // How deep a chain of the module's own methods is followed to the blocking call: the inlinee and two it inlined in turn.
    private const int InlineDepth = 3;

    // How many chains to a blocking call one endpoint's code is searched for, and how deep the framework's own calls are followed.
    private const int MaxChains = 32;
    private const int FrameworkDepth = 3;
    private const int Unknown = 100;
    private const int Unreachable = int.MaxValue;

    private readonly Dictionary<(string, string, string, int, string, string), int> _distances = [];
    private readonly Dictionary<string, ILookup<string, TypeDefinitionHandle>> _types = new(StringComparer.Ordinal);

    /// <summary>
    /// Whether the module is precompiled (ReadyToRun, as <c>PublishReadyToRun</c> makes it): its code runs as compiled
    /// ahead of time until the runtime rejits a hot method, and the runtime reports no IL-to-native map for such code.
    /// </summary>
    public bool IsReadyToRun(string? modulePath) =>
        modulePath is not null && Module(modulePath)?.PEHeaders.CorHeader is { ManagedNativeHeaderDirectory.Size: > 0 };

    // The IL offset of the first call, at or after the mapped offset, to a method named as the callee (its type's simple
    // name and its name); null when the method's IL has none (the call went through code the JIT inlined).
    public int? CallTo(IlLocation location, string callee)
    {
        var (type, method) = SplitCallee(callee);
        if (location.ModulePath is null || Module(location.ModulePath) is not { } pe)
        {
            return null;
        }

        var metadata = pe.GetMetadataReader();
        foreach (var (offset, token) in Calls(pe, metadata, location.MethodToken))
        {
            if (offset >= location.IlOffset && IlOpcodes.Target(metadata, token) is { } target && target.Method == method && (type is null || target.Type == type))
            {
                return offset;
            }
        }

        return null;
    }

    public (int CallOffset, int Token, int InnerOffset, string Method)? InlinedCallAt(IlLocation location, string callee)
    {
        var (type, _) = SplitCallee(callee);
        if (type is null || location.ModulePath is null || Module(location.ModulePath) is not { } pe)
        {
            return null;
        }

        var metadata = pe.GetMetadataReader();
        foreach (var (offset, token) in Calls(pe, metadata, location.MethodToken).Where(call => call.Offset >= location.IlOffset))
        {
            if (IlOpcodes.Target(metadata, token) is { } target && SameType(target.Type, type))
            {
                return null;
            }

            if (Reaching(pe, metadata, token, type, InlineDepth) is { } inner)
            {
                return (offset, inner.Token, inner.Offset, inner.Method);
            }
        }

        return null;
    }

    /// <summary>
    /// The calls from the start of a method to <paramref name="callee"/> (the method a stack shows above code the JIT inlined
    /// away), outermost first: the method's call (to the callee itself, to a method of the callee's type, or to one of its
    /// module's methods on the way) and each call on down, through at most <see cref="InlineDepth"/> + 1 methods. Null when
    /// its IL reaches no such call. Where a Release build inlined an endpoint into ASP.NET Core's invoker, this names the
    /// lines the stack lost, read from the IL of the method the endpoint names.
    /// </summary>
    /// <remarks>
    /// Of several such calls, the one that best explains the callee: a call to the callee itself; else the calls whose
    /// target reaches the callee in the fewest calls of the framework's own IL (read from <paramref name="calleeModulePath"/>:
    /// <c>.Wait()</c> reaches <c>Task.InternalWait</c>, never <c>Task`1.GetResultCore</c>); then the calls in a method that
    /// also calls <paramref name="awaitedMethod"/>, the async method whose task the threads wait on (a dump shows it).
    /// Calls in <paramref name="taken"/> (another stack of the same compiled code blocks there, in another frame) are left
    /// out while others fit. <see cref="FittingChain.Fits"/> counts the calls left equally good; the first in IL order is named.
    /// </remarks>
    public FittingChain? ChainTo(string modulePath, int methodToken, string callee, string? calleeModulePath = null, string? awaitedMethod = null,
        IReadOnlySet<(int MethodToken, int IlOffset)>? taken = null)
    {
        var (type, method) = SplitCallee(callee);
        if (type is null || Module(modulePath) is not { } pe)
        {
            return null;
        }

        var metadata = pe.GetMetadataReader();
        var found = new List<(List<IlCall> Calls, int Target, bool Exact)>();
        Collect(pe, metadata, methodToken, type, method, InlineDepth + 1, [], [], found);
        if (found.Count == 0)
        {
            return null;
        }

        if (taken is { Count: > 0 } && found.Where(f => !taken.Contains((f.Calls[^1].MethodToken, f.Calls[^1].IlOffset))).ToList() is { Count: > 0 } free)
        {
            found = free;
        }

        // A call to the callee itself needs no reading of the framework's IL.
        var ranked = found.Any(f => f.Exact)
            ? [.. found.Where(f => f.Exact).Select(f => (f.Calls, Rank: 0))]
            : found.Select(f => (f.Calls, Rank: FrameworkDistance(metadata, f.Target, calleeModulePath, type, method))).ToList();
        var reachable = ranked.Where(r => r.Rank != Unreachable).ToList();
        var best = reachable.Count == 0 ? ranked : reachable.Where(r => r.Rank == reachable.Min(b => b.Rank)).ToList();
        if (awaitedMethod is not null)
        {
            var awaited = SplitCallee(awaitedMethod).Method;
            var awaiting = best.Where(b => CallsMethodNamed(pe, metadata, b.Calls[^1].MethodToken, awaited)).ToList();
            best = awaiting.Count > 0 ? awaiting : best;
        }

        return new FittingChain(best[0].Calls, best.Count);
    }

    // Each call chain from `token` down to a call of a method of `type`, in IL order, at most MaxChains of them; a method
    // reached again (from another caller) is not read again, so the search stays linear in the code it reads.
    private static void Collect(PEReader pe, MetadataReader metadata, int token, string type, string method, int depth, List<IlCall> path, HashSet<int> seen,
        List<(List<IlCall> Calls, int Target, bool Exact)> found)
    {
        if (found.Count >= MaxChains || MetadataTokens.EntityHandle(token).Kind != HandleKind.MethodDefinition || !seen.Add(token))
        {
            return;
        }

        var name = TypeAndMethod(metadata, (MethodDefinitionHandle)MetadataTokens.EntityHandle(token));
        foreach (var (offset, callToken) in Calls(pe, metadata, token))
        {
            var call = new IlCall(token, offset, name);
            if (IlOpcodes.Target(metadata, callToken) is { } target && SameType(target.Type, type))
            {
                found.Add(([.. path, call], callToken, target.Type == type && target.Method == method));
            }
            else if (depth > 1)
            {
                path.Add(call);
                Collect(pe, metadata, callToken, type, method, depth - 1, path, seen, found);
                path.RemoveAt(path.Count - 1);
            }
        }
    }

    // How many calls of the framework's IL lead from the app's call target to the callee: Unknown where that IL cannot be
    // read or the target not found in it, Unreachable where it is read and the callee is not within FrameworkDepth calls.
    private int FrameworkDistance(MetadataReader app, int targetToken, string? frameworkPath, string type, string method)
    {
        if (frameworkPath is null || Module(frameworkPath) is not { } framework || IlOpcodes.Target(app, targetToken) is not { } target
            || ParameterCount(app, targetToken) is not { } parameters)
        {
            return Unknown;
        }

        var key = (frameworkPath, target.Type, target.Method, parameters, type, method);
        if (_distances.TryGetValue(key, out var known))
        {
            return known;
        }

        var metadata = framework.GetMetadataReader();
        var frontier = Definitions(frameworkPath, metadata, target.Type, target.Method, parameters).ToList();
        var distance = frontier.Count == 0 ? Unknown : Unreachable;
        var seen = frontier.ToHashSet();
        for (var depth = 1; depth <= FrameworkDepth && distance == Unreachable && frontier.Count > 0; depth++)
        {
            var next = new List<int>();
            foreach (var calls in frontier.Select(m => Calls(framework, metadata, m)))
            {
                foreach (var (_, call) in calls)
                {
                    if (IlOpcodes.Target(metadata, call) is not { } called)
                    {
                        continue;
                    }

                    if (called.Type == type && called.Method == method)
                    {
                        distance = depth;
                        break;
                    }

                    next.AddRange(Resolved(frameworkPath, metadata, call).Where(seen.Add));
                }

                if (distance != Unreachable)
                {
                    break;
                }
            }

            frontier = next;
        }

        _distances[key] = distance;
        return distance;
    }

    // The method definitions of this module a call token names: itself, or a member of a generic instantiation by name.
    private IEnumerable<int> Resolved(string modulePath, MetadataReader metadata, int token)
    {
        var handle = MetadataTokens.EntityHandle(token);
        if (handle.Kind == HandleKind.MethodDefinition)
        {
            return [token];
        }

        if (handle.Kind == HandleKind.MethodSpecification)
        {
            return Resolved(modulePath, metadata, MetadataTokens.GetToken(metadata.GetMethodSpecification((MethodSpecificationHandle)handle).Method));
        }

        return handle.Kind == HandleKind.MemberReference
            && metadata.GetMemberReference((MemberReferenceHandle)handle).Parent.Kind is HandleKind.TypeSpecification or HandleKind.TypeDefinition
            && IlOpcodes.Target(metadata, token) is { } target && ParameterCount(metadata, token) is { } parameters
                ? Definitions(modulePath, metadata, target.Type, target.Method, parameters)
                : [];
    }

    // The methods of this module's types of that simple name, with that name and number of parameters.
    private IEnumerable<int> Definitions(string modulePath, MetadataReader metadata, string type, string method, int parameters)
    {
        if (!_types.TryGetValue(modulePath, out var types))
        {
            types = metadata.TypeDefinitions.ToLookup(t => metadata.GetString(metadata.GetTypeDefinition(t).Name), StringComparer.Ordinal);
            _types[modulePath] = types;
        }

        return types[type]
            .SelectMany(t => metadata.GetTypeDefinition(t).GetMethods())
            .Where(m => metadata.StringComparer.Equals(metadata.GetMethodDefinition(m).Name, method)
                && Parameters(metadata, metadata.GetMethodDefinition(m).Signature) == parameters)
            .Select(m => MetadataTokens.GetToken(m));
    }

    private static int? ParameterCount(MetadataReader metadata, int token)
    {
        var handle = MetadataTokens.EntityHandle(token);
        return handle.Kind switch
        {
            HandleKind.MethodDefinition => Parameters(metadata, metadata.GetMethodDefinition((MethodDefinitionHandle)handle).Signature),
            HandleKind.MemberReference => Parameters(metadata, metadata.GetMemberReference((MemberReferenceHandle)handle).Signature),
            HandleKind.MethodSpecification => ParameterCount(metadata, MetadataTokens.GetToken(metadata.GetMethodSpecification((MethodSpecificationHandle)handle).Method)),
            _ => null,
        };
    }

    // A method signature: its header, its generic parameters' count if it has any, then its parameters' count.
    private static int Parameters(MetadataReader metadata, BlobHandle signature)
    {
        var blob = metadata.GetBlobReader(signature);
        if (blob.ReadSignatureHeader().IsGeneric)
        {
            blob.ReadCompressedInteger();
        }

        return blob.ReadCompressedInteger();
    }

    // Whether the method's IL calls a method of that name (the async method a dump shows the threads' task to be).
    private static bool CallsMethodNamed(PEReader pe, MetadataReader metadata, int token, string method) =>
        Calls(pe, metadata, token).Any(call => IlOpcodes.Target(metadata, call.Token)?.Method == method);

    // The method of this module at `token`, or one it calls, that calls a method of `type`: its token, the call's IL offset
    // and its name as a frame names it (Type.Method, nested types joined by '+').
    private static (int Token, int Offset, string Method)? Reaching(PEReader pe, MetadataReader metadata, int token, string type, int depth)
    {
        if (MetadataTokens.EntityHandle(token).Kind != HandleKind.MethodDefinition)
        {
            return null;
        }

        var calls = Calls(pe, metadata, token);
        if (calls.FirstOrDefault(call => IlOpcodes.Target(metadata, call.Token) is { } target && SameType(target.Type, type)) is { Token: not 0 } direct)
        {
            return (token, direct.Offset, TypeAndMethod(metadata, (MethodDefinitionHandle)MetadataTokens.EntityHandle(token)));
        }

        return depth <= 1 ? null : calls.Select(call => Reaching(pe, metadata, call.Token, type, depth - 1)).FirstOrDefault(found => found is not null);
    }

    // A generic type and the type of its name without arity count as one: .Result is Task`1's, and the frame the wait
    // leaves, once get_Result is inlined, is Task's own InternalWait.
    private static bool SameType(string called, string blocking) =>
        called == blocking || called.StartsWith(blocking + "`", StringComparison.Ordinal) || blocking.StartsWith(called + "`", StringComparison.Ordinal);

    // The calls of a method body, in IL order: each one's offset and its target's token; none for a method without a body.
    private static List<(int Offset, int Token)> Calls(PEReader pe, MetadataReader metadata, int methodToken)
    {
        var definition = metadata.GetMethodDefinition(MetadataTokens.MethodDefinitionHandle(methodToken & 0x00FFFFFF));
        var calls = new List<(int Offset, int Token)>();
        if (definition.RelativeVirtualAddress == 0)
        {
            return calls;
        }

        var il = pe.GetMethodBody(definition.RelativeVirtualAddress).GetILReader();
        while (il.RemainingBytes > 0)
        {
            var offset = il.Offset;
            var instruction = IlOpcodes.Read(ref il);
            if (instruction.IsCall)
            {
                calls.Add((offset, il.ReadInt32()));
            }
            else
            {
                IlOpcodes.SkipOperand(ref il, instruction);
            }
        }

        return calls;
    }

    /// <summary>A method as a frame names it: its type's name, nested types joined by '+', and the method.</summary>
    public static string TypeAndMethod(MetadataReader metadata, MethodDefinitionHandle handle)
    {
        var definition = metadata.GetMethodDefinition(handle);
        var type = metadata.GetTypeDefinition(definition.GetDeclaringType());
        var name = metadata.GetString(type.Name);
        for (var outer = type.GetDeclaringType(); !outer.IsNil; outer = metadata.GetTypeDefinition(outer).GetDeclaringType())
        {
            name = metadata.GetString(metadata.GetTypeDefinition(outer).Name) + "+" + name;
        }

        return $"{name}.{metadata.GetString(definition.Name)}";
    }

    /// <summary>
    /// The name of the method's asynchronous twin on its own type, <c>{Name}Async</c>, as the analyzers that flag a blocking
    /// call in async code look for it (CA1849, VSTHRD103); null when the type has none, or the method is async-named, a
    /// constructor, an accessor or compiler-generated, or its module cannot be read.
    /// </summary>
    public string? AsyncTwin(IlLocation location)
    {
        if (location.ModulePath is null || Module(location.ModulePath) is not { } pe)
        {
            return null;
        }

        var metadata = pe.GetMetadataReader();
        var definition = metadata.GetMethodDefinition(MetadataTokens.MethodDefinitionHandle(location.MethodToken & 0x00FFFFFF));
        var name = metadata.GetString(definition.Name);
        if (name.EndsWith("Async", StringComparison.Ordinal) || name.Contains('<', StringComparison.Ordinal) || name.StartsWith('.')
            || name.StartsWith("get_", StringComparison.Ordinal) || name.StartsWith("set_", StringComparison.Ordinal))
        {
            return null;
        }

        var twin = name + "Async";
        return metadata.GetTypeDefinition(definition.GetDeclaringType()).GetMethods()
            .Any(handle => metadata.StringComparer.Equals(metadata.GetMethodDefinition(handle).Name, twin)) ? twin : null;
    }

    // "System.Threading.Tasks.Task`1.GetResultCore" -> ("Task`1", "GetResultCore"); a nested type's outer part goes.
    private static (string? Type, string Method) SplitCallee(string callee)
    {
        var method = callee[(callee.LastIndexOf('.') + 1)..];
        var typePart = callee.LastIndexOf('.') is var dot and > 0 ? callee[..dot] : null;
        var type = typePart?[(typePart.LastIndexOfAny(['.', '+']) + 1)..];
        return (type, method);
    }

    private PEReader? Module(string modulePath) => modules.Open(modulePath);
}

/// <summary>A chain of calls to a blocking call, and how many chains of the same code explain the stack as well as it does.</summary>
internal sealed record FittingChain(IReadOnlyList<IlCall> Calls, int Fits);

/// <summary>A call in a method's IL: the method (its token and name as a frame names it) and the call's IL offset.</summary>
internal readonly record struct IlCall(int MethodToken, int IlOffset, string Method);
