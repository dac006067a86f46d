using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Text;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// File and line of an IL offset, from the portable PDB beside the module or embedded in it (System.Reflection.Metadata,
/// as dotnet-stack's symbolication reads it), and the line's text when the source file is on disk. Local files only: no
/// symbol server, nothing over the network. Each module, its PDB and each source file is opened once.
/// </summary>
internal sealed class SourceLines : IDisposable
{
    private const int MaxTextLength = 100;

    private readonly Dictionary<string, (MetadataReaderProvider? Pdb, string? Missing)> _pdbs = new(StringComparer.Ordinal);
    private readonly Dictionary<string, string[]?> _files = new(StringComparer.Ordinal);
    private readonly Dictionary<string, bool> _matches = new(StringComparer.Ordinal);
    private readonly ModuleReaders _modules;
    private readonly bool _ownsModules;

    /// <param name="modules">The module files, shared with the analysis's other readers; null opens and closes its own.</param>
    public SourceLines(ModuleReaders? modules = null) => (_modules, _ownsModules) = (modules ?? new ModuleReaders(), modules is null);

    /// <summary>The line of <paramref name="location"/>, or why there is none (which file is missing, or that the PDB has no line there).</summary>
    /// <param name="location">Where the code address is in its method's IL.</param>
    /// <param name="callee">
    /// For a frame that is not the leaf, the method it called (<c>System.Threading.Lock.EnterScope</c>). Optimized code maps
    /// native code to IL only here and there, so a call's return address can map to an earlier statement (the method's
    /// opening brace); the first call to that method at or after the mapped IL offset is the call, and its line is the line.
    /// </param>
    public (SourceLine? Line, string? Missing) Find(IlLocation location, string? callee = null)
    {
        var (line, missing, _) = FindCall(location, callee);
        return (line, missing);
    }

    /// <summary>
    /// The line as <see cref="Find"/> gives it and, when the call a frame that is not the leaf makes is in an app method the
    /// JIT inlined into the frame, that method with the line of the call in it; null when the frame makes the call itself.
    /// A frame's method that calls nothing of the called method's type at or after the mapped IL offset, but calls a method
    /// of its own module whose IL does (directly, or through two more such methods), had that method's code inlined there:
    /// a stack holds no frame for it. Read from the IL, as the JIT's own record of what it inlined is not in the trace.
    /// </summary>
    public (SourceLine? Line, string? Missing, AppFrame? Inlined) FindCall(IlLocation location, string? callee)
    {
        if (callee is null)
        {
            var (leafLine, leafMissing) = LineAt(location, location.IlOffset, ofACall: false);
            return (leafLine, leafMissing, null);
        }

        var direct = CallTo(location, callee);
        var inlined = direct is null ? InlinedCallAt(location, callee) : null;
        var (line, missing) = LineAt(location, direct ?? inlined?.CallOffset ?? location.IlOffset, ofACall: true, takesALock: IsLockCall(callee));
        if (inlined is not { } call)
        {
            return (line, missing, null);
        }

        var inside = location with { MethodToken = call.Token, IlOffset = call.InnerOffset };
        var (innerLine, innerMissing) = LineAt(inside, inside.IlOffset, ofACall: false);
        return (line, missing, new AppFrame(call.Method, innerLine, innerMissing) { AsyncTwin = AsyncTwin(inside) });
    }

    // C# takes a lock on System.Threading.Lock with a call the PDB files under no line of its own.
    private static bool IsLockCall(string callee) => callee.StartsWith("System.Threading.Lock.", StringComparison.Ordinal);

    // The line of the sequence point at `ilOffset`; `ofACall`: the offset is a call's, found or mapped from a return address;
    // `takesALock`: the call takes a System.Threading.Lock.
    private (SourceLine? Line, string? Missing) LineAt(IlLocation location, int ilOffset, bool ofACall, bool takesALock = false)
    {
        if (location.ModulePath is null)
        {
            return (null, "the trace does not name the module's file");
        }

        var (pdb, missing) = Pdb(location);
        if (pdb is null)
        {
            return (null, missing);
        }

        var reader = pdb.GetMetadataReader();
        var handle = MetadataTokens.MethodDefinitionHandle(location.MethodToken & 0x00FFFFFF);
        SequencePoint? best = null;
        SequencePoint? next = null;
        foreach (var point in reader.GetMethodDebugInformation(handle).GetSequencePoints())
        {
            if (point.IsHidden)
            {
                continue;
            }

            if (point.Offset <= ilOffset && (best is null || point.Offset >= best.Value.Offset))
            {
                best = point;
            }
            else if (point.Offset > ilOffset && (next is null || point.Offset < next.Value.Offset))
            {
                next = point;
            }
        }

        if (best is not { } found)
        {
            return (null, $"{Path.GetFileName(location.ModulePath)}'s PDB has no line at IL offset {location.IlOffset} of this method");
        }

        var file = reader.GetString(reader.GetDocument(found.Document).Name);
        if (!MatchesTheBuild(reader, found.Document, file))
        {
            // Edited since the build (a workshop edits the file while the app runs): its lines are not the build's.
            return (new SourceLine(file, found.StartLine, null) { ChangedSinceTheBuild = true }, null);
        }

        var text = Text(file, found);
        // A brace makes no call: a call filed under a block's opening brace belongs to a statement the compiler gave no line
        // of its own (a lock on System.Threading.Lock takes it in code filed under the brace before it), whether the call
        // lies past the brace's start or the return address maps to its start (the JIT inlined Lock.EnterScope, so the
        // frame below is EnterScope's callee, which the IL never calls). The statement is the first line of code after the
        // brace and before the next line the PDB names.
        if (text == "{" && (ilOffset > found.Offset || ofACall) && StatementAfter(file, found, next) is { } statement)
        {
            return (new SourceLine(file, statement.Line, statement.Text), null);
        }

        // The same lock after another statement: its call is filed under that statement's line, and the lock is the first
        // line of code after it, before the next line the PDB names (the lock's body).
        if (takesALock && text?.StartsWith("lock", StringComparison.Ordinal) != true
            && StatementAfter(file, found, next) is { } lockStatement && lockStatement.Text.StartsWith("lock", StringComparison.Ordinal))
        {
            return (new SourceLine(file, lockStatement.Line, lockStatement.Text), null);
        }

        return (new SourceLine(file, found.StartLine, text), null);
    }

    /// <summary>
    /// Whether the module is precompiled (ReadyToRun, as <c>PublishReadyToRun</c> makes it): its code runs as compiled
    /// ahead of time until the runtime rejits a hot method, and the runtime reports no IL-to-native map for such code.
    /// </summary>
    public bool IsReadyToRun(string? modulePath) =>
        modulePath is not null && Module(modulePath)?.PEHeaders.CorHeader is { ManagedNativeHeaderDirectory.Size: > 0 };

    public void Dispose()
    {
        foreach (var (pdb, _) in _pdbs.Values)
        {
            pdb?.Dispose();
        }

        if (_ownsModules)
        {
            _modules.Dispose();
        }
    }

    // The IL offset of the first call, at or after the mapped offset, to a method named as the callee (its type's simple
    // name and its name); null when the method's IL has none (the call went through code the JIT inlined).
    private int? CallTo(IlLocation location, string callee)
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

    // How deep a chain of the module's own methods is followed to the blocking call: the inlinee and two it inlined in turn.
    private const int InlineDepth = 3;

    private (int CallOffset, int Token, int InnerOffset, string Method)? InlinedCallAt(IlLocation location, string callee)
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

    private static string TypeAndMethod(MetadataReader metadata, MethodDefinitionHandle handle)
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

    private PEReader? Module(string modulePath) => _modules.Open(modulePath);

    private (MetadataReaderProvider? Pdb, string? Missing) Pdb(IlLocation location)
    {
        var modulePath = location.ModulePath!;
        if (!_pdbs.TryGetValue(modulePath, out var entry))
        {
            entry = File.Exists(modulePath) ? OpenPdb(modulePath) : OpenPdbWithoutModule(location);
            _pdbs[modulePath] = entry;
        }

        return entry;
    }

    // A module with no file of its own: a single-file app's bundle holds it, or the trace came from another machine. Its PDB
    // may still be on disk, beside the bundle (where a single-file publish puts it) or where the build wrote it; it is
    // taken only when its id is the one the runtime reported for the module.
    private static (MetadataReaderProvider? Pdb, string? Missing) OpenPdbWithoutModule(IlLocation location)
    {
        var (modulePath, signature, buildPath) = (location.Module!.Path, location.Module.PdbSignature, location.Module.PdbBuildPath);
        if (signature == Guid.Empty)
        {
            return (null, $"{modulePath} is not on disk and the trace does not give its PDB's id");
        }

        string?[] candidates = [Path.ChangeExtension(modulePath, ".pdb"), buildPath];
        foreach (var candidate in candidates.OfType<string>().Where(File.Exists).Distinct(StringComparer.Ordinal))
        {
            MetadataReaderProvider? pdb = null;
            try
            {
                pdb = MetadataReaderProvider.FromPortablePdbStream(File.OpenRead(candidate));
                var id = pdb.GetMetadataReader().DebugMetadataHeader?.Id;
                if (id is { Length: >= 16 } bytes && new Guid(bytes.AsSpan(0, 16)) == signature)
                {
                    (var found, pdb) = (pdb, null);
                    return (found, null);
                }
            }
            catch (Exception e) when (e is BadImageFormatException or IOException or UnauthorizedAccessException or InvalidOperationException)
            {
                // Not a portable PDB, or unreadable: the next candidate, or the message below.
            }
            finally
            {
                pdb?.Dispose();
            }
        }

        return (null, $"{modulePath} is not on disk (a single-file app's bundle holds it, or the trace is from another machine), and no portable PDB with its id is beside it or at {buildPath ?? "its build path"}");
    }

    private (MetadataReaderProvider? Pdb, string? Missing) OpenPdb(string modulePath)
    {
        var name = Path.GetFileName(modulePath);

        try
        {
            if (Module(modulePath) is not { } pe)
            {
                return (null, $"{name} could not be opened to find its PDB");
            }

            // The PDB the module names (its build path), the same name beside the module, or the one embedded in it; the
            // reader checks that its id matches the module's.
            if (pe.TryOpenAssociatedPortablePdb(modulePath, path => File.Exists(path) ? File.OpenRead(path) : null, out var pdb, out _) && pdb is not null)
            {
                return (pdb, null);
            }

            // A PDB of the module's name whose id is not the module's: another build's, left beside a rebuilt module.
            var beside = Path.ChangeExtension(modulePath, ".pdb");
            return File.Exists(beside)
                ? (null, $"the PDB beside {name} is from another build (its id is not the module's): deploy the .pdb built with it")
                : (null, $"no portable PDB beside {name} nor embedded in it: build with <DebugType>portable</DebugType> (the default) or embedded, and deploy the .pdb");
        }
        catch (Exception e) when (e is BadImageFormatException or IOException or UnauthorizedAccessException or InvalidOperationException)
        {
            return (null, $"{name}'s PDB could not be read ({e.GetType().Name}: {e.Message.Split('\n', 2)[0].Trim()})");
        }
    }

    // The first line of code after a sequence point and before the next one's line: not blank, a comment or a brace.
    private (int Line, string Text)? StatementAfter(string file, SequencePoint point, SequencePoint? next)
    {
        if (Lines(file) is not { } lines)
        {
            return null;
        }

        var last = Math.Min(next is { } n && n.StartLine > point.EndLine ? n.StartLine - 1 : lines.Length, lines.Length);
        for (var line = point.EndLine + 1; line <= last; line++)
        {
            var content = lines[line - 1].Trim();
            if (content.Length > 0 && !content.StartsWith("//", StringComparison.Ordinal) && content is not ("{" or "}"))
            {
                return (line, content.Length <= MaxTextLength ? content : string.Concat(content.AsSpan(0, MaxTextLength - 1), "…"));
            }
        }

        return null;
    }

    // The checksum algorithms a PDB names a document's hash by.
    private static readonly Guid Sha1 = new("ff1816ec-aa5e-4d10-87f7-6f4963833460");
    private static readonly Guid Sha256 = new("8829d00f-11b8-4213-878b-770e8597ac16");

    // Whether the file on disk is the one the PDB was built from, by the checksum the compiler recorded for it; true when the
    // file is not there (the line says so) or the PDB records no checksum it knows.
    private bool MatchesTheBuild(MetadataReader reader, DocumentHandle handle, string file)
    {
        if (_matches.TryGetValue(file, out var matches))
        {
            return matches;
        }

        var document = reader.GetDocument(handle);
        var algorithm = document.HashAlgorithm.IsNil ? Guid.Empty : reader.GetGuid(document.HashAlgorithm);
        var recorded = document.Hash.IsNil ? [] : reader.GetBlobBytes(document.Hash);
        matches = true;
        if (recorded.Length > 0 && (algorithm == Sha1 || algorithm == Sha256) && File.Exists(file))
        {
            try
            {
                var bytes = File.ReadAllBytes(file);
#pragma warning disable CA5350 // a file's identity as an older compiler recorded it, not a security check
                matches = recorded.AsSpan().SequenceEqual(algorithm == Sha256 ? System.Security.Cryptography.SHA256.HashData(bytes) : System.Security.Cryptography.SHA1.HashData(bytes));
#pragma warning restore CA5350
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                matches = true;
            }
        }

        _matches[file] = matches;
        return matches;
    }

    private string[]? Lines(string file)
    {
        if (!_files.TryGetValue(file, out var lines))
        {
            try
            {
                lines = File.Exists(file) ? File.ReadAllLines(file) : null;
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Unreadable, as if missing: the frame keeps its file and line, without the text.
                lines = null;
            }

            _files[file] = lines;
        }

        return lines;
    }

    // The statement the sequence point spans, on one line: what a reader searches the file for.
    private string? Text(string file, SequencePoint point)
    {
        if (Lines(file) is not { } lines || point.StartLine > lines.Length)
        {
            return null;
        }

        var text = new StringBuilder();
        for (var line = point.StartLine; line <= Math.Min(point.EndLine, lines.Length); line++)
        {
            var content = lines[line - 1];
            var end = line == point.EndLine ? Math.Min(point.EndColumn - 1, content.Length) : content.Length;
            var start = line == point.StartLine ? Math.Min(point.StartColumn - 1, end) : 0;
            text.Append(content.AsSpan(start, end - start).Trim()).Append(' ');
        }

        return Shorten(text.ToString().Trim());
    }

    private static string Shorten(string statement) =>
        statement.Length <= MaxTextLength ? statement : string.Concat(statement.AsSpan(0, MaxTextLength - 1), "…");
}
