using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The jitted code of a trace: each native code body's address range, method token, module and IL-to-native map, as
/// the runtime's rundown (and, in a session with the JIT keyword, its JIT events) describe them. TraceLog keeps the maps
/// to itself and guesses a return address's IL offset by interpolation; a frame's line needs the exact map.
/// </summary>
internal sealed class NativeCodeMaps
{
    // IL offsets below zero mark the prolog (-2), the epilog (-3) and code with no IL (-1).
    private const int FirstRealIlOffset = 0;

    private readonly CodeBody[] _bodies;
    private readonly Dictionary<string, string> _assemblies;
    // The loader's spelling of each module file, looked up ignoring case; paths that differ by case alone are left out.
    private readonly Dictionary<string, string> _loadedPaths;

    private readonly Func<string, string> _locate;

    private NativeCodeMaps(CodeBody[] bodies, Dictionary<string, string> assemblies, IEnumerable<string> loadedPaths, Func<string, string> locate)
    {
        (_bodies, _assemblies, _locate) = (bodies, assemblies, locate);
        _loadedPaths = loadedPaths
            .Distinct(StringComparer.Ordinal)
            .GroupBy(p => p, StringComparer.OrdinalIgnoreCase)
            .Where(g => g.Count() == 1)
            .ToDictionary(g => g.Key, g => locate(g.Single()), StringComparer.OrdinalIgnoreCase);
    }

    /// <summary>
    /// Reads the method and map events of a <c>.nettrace</c>: a pass over the file, without TraceLog. Each module's file is
    /// where <paramref name="locate"/> says for the path the trace gives (<see cref="DiagnosisOptions.Locate"/>).
    /// </summary>
    public static NativeCodeMaps Read(string nettracePath, Func<string, string>? locate = null)
    {
        locate ??= path => path;
        var modules = new Dictionary<long, ModuleFile>();
        var assemblies = new Dictionary<long, string>();
        var bodies = new List<CodeBody>();

        // A body's map and its method event come one after the other from one thread (the map first in a rundown, the
        // method first at JIT time): whichever comes first waits here for its twin.
        var maps = new Dictionary<(int Thread, long MethodId), IlMap>();
        var methods = new Dictionary<(int Thread, long MethodId), (ulong Start, int Size, int Token, long ModuleId, string Tier)>();

        void OnMethod(MethodLoadUnloadVerboseTraceData data)
        {
            var key = (data.ThreadID, data.MethodID);
            if (maps.Remove(key, out var map))
            {
                bodies.Add(new CodeBody(data.MethodStartAddress, data.MethodSize, data.MethodToken, data.ModuleID, map) { Tier = Tier(data) });
            }
            else
            {
                methods[key] = (data.MethodStartAddress, data.MethodSize, data.MethodToken, data.ModuleID, Tier(data));
            }
        }

        void OnMap(MethodILToNativeMapTraceData data)
        {
            var key = (data.ThreadID, data.MethodID);
            var map = IlMap.From(data);
            if (methods.Remove(key, out var method))
            {
                bodies.Add(new CodeBody(method.Start, method.Size, method.Token, method.ModuleId, map) { Tier = method.Tier });
            }
            else
            {
                maps[key] = map;
            }
        }

        using (var source = new EventPipeEventSource(nettracePath))
        {
            var rundown = new ClrRundownTraceEventParser(source);
            rundown.MethodDCStopVerbose += OnMethod;
            rundown.MethodILToNativeMapDCStop += OnMap;
            rundown.LoaderModuleDCStop += data => modules[data.ModuleID] = ModuleFile.From(data, locate);
            rundown.LoaderAssemblyDCStop += data => assemblies[data.AssemblyID] = data.FullyQualifiedAssemblyName;
            source.Clr.MethodLoadVerbose += OnMethod;
            source.Clr.MethodILToNativeMap += OnMap;
            source.Clr.LoaderModuleLoad += data => modules[data.ModuleID] = ModuleFile.From(data, locate);
            source.Clr.LoaderAssemblyLoad += data => assemblies[data.AssemblyID] = data.FullyQualifiedAssemblyName;
            source.Process();
        }

        // A body without its map (ReadyToRun code, a method compiled at run time, a map the session did not ask for) has no
        // lines, only its tier.
        bodies.AddRange(methods.Values.Select(m => new CodeBody(m.Start, m.Size, m.Token, m.ModuleId, null) { Tier = m.Tier }));
        return new NativeCodeMaps(bodies
            .Select(b => b with { Module = modules.GetValueOrDefault(b.ModuleId) })
            .OrderBy(b => b.Start)
            .ToArray(),
            modules.Values
                .Where(m => assemblies.ContainsKey(m.AssemblyId))
                .DistinctBy(m => m.Path, StringComparer.Ordinal)
                .ToDictionary(m => m.Path, m => assemblies[m.AssemblyId], StringComparer.Ordinal),
            modules.Values.Select(m => m.TracePath),
            locate);
    }

    /// <summary>
    /// The jitted code another source read (a dump's methods, with the runtime's own IL-to-native maps): each body's start,
    /// size, token, module, tier and map, as native offsets from its start paired with IL offsets.
    /// </summary>
    public static NativeCodeMaps From(IEnumerable<JittedCode> code) =>
        new([.. code.Select(c => new CodeBody(c.Start, c.Size, c.Token, 0, c.IlOffsets.Length == 0 ? null : new IlMap(c.IlOffsets, c.NativeOffsets))
            {
                Module = c.Module,
                Tier = c.Tier,
            })
            .OrderBy(b => b.Start)],
            [],
            [],
            path => path);

    /// <summary>
    /// A module's file as the runtime's loader events spell it, for a path TraceLog gives. TraceLog lowercases the path of
    /// a module the process loads while the session records (<c>…/bin/release/net10.0/…</c>), which on a case-sensitive file
    /// system names no file, no entry in a <c>.deps.json</c> folder and no identity: the loader's own spelling, when exactly
    /// one path differs from it by case alone, is the file. Any other path is returned as it came.
    /// </summary>
    /// <remarks>Where the module's file is read instead (<see cref="DiagnosisOptions.SymbolFolders"/>), that file.</remarks>
    public string LoadedPath(string tracePath) => _loadedPaths.GetValueOrDefault(tracePath) ?? _locate(tracePath);

    /// <summary>
    /// The identity of the assembly a module file belongs to, as the loader's events name it
    /// (<c>System.Private.CoreLib, Version=10.0.0.0, Culture=neutral, PublicKeyToken=7cec85d7bea7798e</c>), or null.
    /// It holds where the file does not: a single-file app's bundle.
    /// </summary>
    public string? AssemblyOf(string modulePath) => _assemblies.GetValueOrDefault(modulePath);

    /// <summary>How the JIT compiled the code at an address (<c>OptimizedTier1</c>, <c>QuickJitted</c>, …); null when no jitted body holds it.</summary>
    public string? TierAt(ulong address) => Body(address)?.Tier;

    /// <summary>
    /// The method token, module and IL offset of a code address, or null when no jitted body with a map holds it.
    /// A frame that is not the leaf holds a return address, the instruction after its call: the byte before it is the call.
    /// </summary>
    public IlLocation? Find(ulong address, bool isLeaf)
    {
        var target = isLeaf ? address : address - 1;
        if (Body(target) is not { } body)
        {
            return null;
        }

        if (body.Map is null)
        {
            return null;
        }

        var ilOffset = body.Map.IlOffsetAt((int)(target - body.Start));
        return ilOffset < FirstRealIlOffset ? null : new IlLocation(body.Module, body.Token, ilOffset);
    }

    // The jitted body whose code holds the address, by binary search of the bodies sorted by start.
    private CodeBody? Body(ulong address)
    {
        var low = 0;
        var high = _bodies.Length - 1;
        while (low <= high)
        {
            var middle = low + ((high - low) / 2);
            var body = _bodies[middle];
            if (address < body.Start)
            {
                high = middle - 1;
            }
            else if (address >= body.Start + (ulong)body.Size)
            {
                low = middle + 1;
            }
            else
            {
                return body;
            }
        }

        return null;
    }

    private sealed record CodeBody(ulong Start, int Size, int Token, long ModuleId, IlMap? Map)
    {
        public ModuleFile? Module { get; init; }

        /// <summary>How the JIT compiled it, as the runtime names the tier (<c>OptimizedTier1</c>, <c>QuickJitted</c>, …).</summary>
        public string Tier { get; init; } = "Unknown";
    }

    private static string Tier(MethodLoadUnloadVerboseTraceData data) => data.OptimizationTier.ToString();

    private sealed class IlMap(int[] ilOffsets, int[] nativeOffsets)
    {
        public static IlMap From(MethodILToNativeMapTraceData data)
        {
            var il = new int[data.CountOfMapEntries];
            var native = new int[data.CountOfMapEntries];
            for (var i = 0; i < il.Length; i++)
            {
                il[i] = data.ILOffset(i);
                native[i] = data.NativeOffset(i);
            }

            return new IlMap(il, native);
        }

        // The entry that starts nearest at or before the native offset; among entries that start at the same place, one
        // with real IL (a prolog or epilog marker can share an offset with the statement beside it).
        public int IlOffsetAt(int nativeOffset)
        {
            var best = -1;
            for (var i = 0; i < nativeOffsets.Length; i++)
            {
                if (nativeOffsets[i] > nativeOffset)
                {
                    continue;
                }

                if (best < 0 || nativeOffsets[i] > nativeOffsets[best] || (nativeOffsets[i] == nativeOffsets[best] && ilOffsets[best] < FirstRealIlOffset))
                {
                    best = i;
                }
            }

            return best < 0 ? -1 : ilOffsets[best];
        }
    }
}

/// <summary>
/// A module as the loader's events name it: its file, its assembly's id in the trace, and the id and build path of its PDB
/// (which a module inside a single-file bundle, with no file of its own, still reports).
/// </summary>
/// <param name="PdbSignature">The id of the module's PDB as the runtime reported it (the first 16 bytes of a portable PDB's id); empty when unknown.</param>
/// <param name="PdbBuildPath">Where the module's PDB was written when it was built, as the runtime reported it.</param>
internal sealed record ModuleFile(string Path, long AssemblyId, Guid PdbSignature, string? PdbBuildPath)
{
    /// <summary>The module's file as the trace names it, where <see cref="Path"/> is where it is read.</summary>
    public string TracePath { get; init; } = Path;

    public static ModuleFile From(ModuleLoadUnloadTraceData data, Func<string, string> locate) =>
        new(locate(data.ModuleILPath), data.AssemblyID, data.ManagedPdbSignature, string.IsNullOrEmpty(data.ManagedPdbBuildPath) ? null : data.ManagedPdbBuildPath)
        {
            TracePath = data.ModuleILPath,
        };

    /// <summary>A module known only by its file, as a stack frame names it.</summary>
    public static ModuleFile At(string path) => new(path, 0, Guid.Empty, null);
}

/// <summary>One jitted method body as a source other than a trace reads it; <see cref="NativeCodeMaps.From"/> takes these.</summary>
/// <param name="NativeOffsets">Where each entry of the map starts, from <paramref name="Start"/>; with <paramref name="IlOffsets"/>, the IL offset it runs.</param>
internal sealed record JittedCode(ulong Start, int Size, int Token, ModuleFile? Module, string Tier, int[] IlOffsets, int[] NativeOffsets);

/// <summary>Where a code address is in its method's IL: the module, the method's metadata token and the IL offset.</summary>
internal sealed record IlLocation(ModuleFile? Module, int MethodToken, int IlOffset)
{
    public string? ModulePath => Module?.Path;
}
