using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// File and line of an IL offset, from the portable PDB beside the module or embedded in it (System.Reflection.Metadata,
/// as dotnet-stack's symbolication reads it), and the line's text when the source file is on disk. Local files only: no
/// symbol server, nothing over the network. Each module, its PDB and each source file is opened once.
/// </summary>
internal sealed class SourceLines : IDisposable
{
    // The kind of a portable PDB's custom debug information that lists an async method's awaits.
    private static readonly Guid AsyncMethodSteppingInformation = new("54FD2AC5-E925-401A-9C2A-F94F171072F8");

    private readonly ModuleReaders _modules;
    private readonly bool _ownsModules;
    private readonly PortablePdbs _pdbs;
    private readonly SourceFiles _files = new();
    private readonly IlCalls _calls;

    /// <param name="modules">The module files, shared with the analysis's other readers; null opens and closes its own.</param>
    /// <param name="symbolDirectories">Folders to look for a module's PDB in when it is not beside the module (<c>--symbols</c>).</param>
    public SourceLines(ModuleReaders? modules = null, IReadOnlyList<string>? symbolDirectories = null)
    {
        (_modules, _ownsModules) = (modules ?? new ModuleReaders(), modules is null);
        _pdbs = new PortablePdbs(_modules, symbolDirectories ?? []);
        _calls = new IlCalls(_modules);
    }

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

        var direct = _calls.CallTo(location, callee);
        var inlined = direct is null ? _calls.InlinedCallAt(location, callee) : null;
        var (line, missing) = LineAt(location, direct ?? inlined?.CallOffset ?? location.IlOffset, ofACall: true, takesALock: IsLockCall(callee));
        if (inlined is not { } call)
        {
            return (line, missing, null);
        }

        var inside = location with { MethodToken = call.Token, IlOffset = call.InnerOffset };
        var (innerLine, innerMissing) = LineAt(inside, inside.IlOffset, ofACall: false);
        return (line, missing, new AppFrame(call.Method, innerLine, innerMissing) { AsyncTwin = _calls.AsyncTwin(inside) });
    }

    /// <summary>The line of the call at <paramref name="location"/>'s IL offset, a call to <paramref name="callee"/>, or why there is none.</summary>
    public (SourceLine? Line, string? Missing) LineOfCall(IlLocation location, string callee) =>
        LineAt(location, location.IlOffset, ofACall: true, takesALock: IsLockCall(callee));

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

        var (pdb, missing) = _pdbs.Open(location);
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
        if (!_files.MatchesTheBuild(reader, found.Document, file))
        {
            // Edited since the build (a workshop edits the file while the app runs): its lines are not the build's.
            return (new SourceLine(file, found.StartLine, null) { ChangedSinceTheBuild = true }, null);
        }

        var text = _files.Text(file, found);
        // A brace makes no call: a call filed under a block's opening brace belongs to a statement the compiler gave no line
        // of its own (a lock on System.Threading.Lock takes it in code filed under the brace before it), whether the call
        // lies past the brace's start or the return address maps to its start (the JIT inlined Lock.EnterScope, so the
        // frame below is EnterScope's callee, which the IL never calls). The statement is the first line of code after the
        // brace and before the next line the PDB names.
        if (text == "{" && (ilOffset > found.Offset || ofACall) && _files.StatementAfter(file, found, next) is { } statement)
        {
            return (new SourceLine(file, statement.Line, statement.Text), null);
        }

        // The same lock after another statement: its call is filed under that statement's line, and the lock is the first
        // line of code after it, before the next line the PDB names (the lock's body).
        if (takesALock && text?.StartsWith("lock", StringComparison.Ordinal) != true
            && _files.StatementAfter(file, found, next) is { } lockStatement && lockStatement.Text.StartsWith("lock", StringComparison.Ordinal))
        {
            return (new SourceLine(file, lockStatement.Line, lockStatement.Text), null);
        }

        return (new SourceLine(file, found.StartLine, text), null);
    }

    /// <summary>
    /// The line of the await an async method's state machine is suspended at: the PDB's stepping information for its
    /// <c>MoveNext</c> lists the awaits' yield offsets by state, as a debugger's async stepping reads them.
    /// </summary>
    /// <param name="module">The state machine's module.</param>
    /// <param name="moveNextToken">The token of the state machine's <c>MoveNext</c>.</param>
    /// <param name="state">The state machine's <c>&lt;&gt;1__state</c>: the await it is suspended at, counted from 0.</param>
    public (SourceLine? Line, string? Missing) AwaitLine(ModuleFile module, int moveNextToken, int state)
    {
        var moveNext = new IlLocation(module, moveNextToken, 0);
        var (pdb, missing) = _pdbs.Open(moveNext);
        if (pdb is null)
        {
            return (null, missing);
        }

        var reader = pdb.GetMetadataReader();
        foreach (var handle in reader.GetCustomDebugInformation(MetadataTokens.MethodDefinitionHandle(moveNextToken & 0x00FFFFFF)))
        {
            var information = reader.GetCustomDebugInformation(handle);
            if (reader.GetGuid(information.Kind) != AsyncMethodSteppingInformation)
            {
                continue;
            }

            // The offset of the catch handler, then per await: its yield offset, its resume offset, the method resumed.
            var blob = reader.GetBlobReader(information.Value);
            blob.ReadUInt32();
            for (var index = 0; blob.RemainingBytes > 0; index++)
            {
                var yieldOffset = (int)blob.ReadUInt32();
                blob.ReadUInt32();
                blob.ReadCompressedInteger();
                if (index == state)
                {
                    return LineAt(moveNext with { IlOffset = yieldOffset }, yieldOffset, ofACall: false);
                }
            }
        }

        return (null, $"{Path.GetFileName(module.Path)}'s PDB lists no await #{state + 1} for this async method");
    }

    /// <inheritdoc cref="IlCalls.IsReadyToRun"/>
    public bool IsReadyToRun(string? modulePath) => _calls.IsReadyToRun(modulePath);

    /// <inheritdoc cref="IlCalls.ChainTo"/>
    public FittingChain? ChainTo(string modulePath, int methodToken, string callee, string? calleeModulePath, string? awaitedMethod, IReadOnlySet<(int MethodToken, int IlOffset)>? taken) =>
        _calls.ChainTo(modulePath, methodToken, callee, calleeModulePath, awaitedMethod, taken);

    /// <inheritdoc cref="IlCalls.AsyncTwin"/>
    public string? AsyncTwin(IlLocation location) => _calls.AsyncTwin(location);

    public void Dispose()
    {
        _pdbs.Dispose();
        if (_ownsModules)
        {
            _modules.Dispose();
        }
    }
}
