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
    /// module's methods on the way) and each call on down, through at most <paramref name="depth"/> methods. Null when its IL
    /// reaches no such call. Where a Release build inlined an endpoint into ASP.NET Core's invoker, this names the lines the
    /// stack lost, read from the IL of the method the endpoint names.
    /// </summary>
    public IReadOnlyList<IlCall>? ChainTo(string modulePath, int methodToken, string callee, int depth = InlineDepth + 1)
    {
        var (type, method) = SplitCallee(callee);
        if (type is null || Module(modulePath) is not { } pe)
        {
            return null;
        }

        var metadata = pe.GetMetadataReader();
        return Chain(pe, metadata, methodToken, type, method, depth, []);
    }

    private static List<IlCall>? Chain(PEReader pe, MetadataReader metadata, int token, string type, string method, int depth, HashSet<int> seen)
    {
        if (MetadataTokens.EntityHandle(token).Kind != HandleKind.MethodDefinition || !seen.Add(token))
        {
            return null;
        }

        var calls = Calls(pe, metadata, token);
        var targets = calls.Select(call => (call.Offset, call.Token, Target: IlOpcodes.Target(metadata, call.Token))).ToList();
        var name = TypeAndMethod(metadata, (MethodDefinitionHandle)MetadataTokens.EntityHandle(token));
        var at = targets.FirstOrDefault(c => c.Target is { } t && t.Type == type && t.Method == method);
        if (at.Target is null)
        {
            at = targets.FirstOrDefault(c => c.Target is { } t && SameType(t.Type, type));
        }

        if (at.Target is not null)
        {
            return [new IlCall(token, at.Offset, name)];
        }

        if (depth <= 1)
        {
            return null;
        }

        foreach (var (offset, callToken, _) in targets)
        {
            if (Chain(pe, metadata, callToken, type, method, depth - 1, seen) is { } inner)
            {
                return [new IlCall(token, offset, name), .. inner];
            }
        }

        return null;
    }

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

/// <summary>A call in a method's IL: the method (its token and name as a frame names it) and the call's IL offset.</summary>
internal readonly record struct IlCall(int MethodToken, int IlOffset, string Method);
