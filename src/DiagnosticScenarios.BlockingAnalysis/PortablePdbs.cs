using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The portable PDB of a module: the one the module names, the same name beside it, or the one embedded in it, its id
/// checked against the module's (as dotnet-stack's symbolication finds it), or one of that name in a folder given
/// (<c>--symbols</c>). Local files only: no symbol server.
/// </summary>
internal sealed class PortablePdbs(ModuleReaders modules, IReadOnlyList<string> symbolDirectories) : IDisposable
{
    private readonly Dictionary<string, (MetadataReaderProvider? Pdb, string? Missing)> _pdbs = new(StringComparer.Ordinal);

    /// <summary>The portable PDB of the location's module, or why there is none.</summary>
    public (MetadataReaderProvider? Pdb, string? Missing) Open(IlLocation location)
    {
        var modulePath = location.ModulePath!;
        if (!_pdbs.TryGetValue(modulePath, out var entry))
        {
            entry = File.Exists(modulePath) ? OpenPdbOfTheBuildThatRan(location) : OpenPdbWithoutModule(location, symbolDirectories);
            _pdbs[modulePath] = entry;
        }

        return entry;
    }

    // A module with no file of its own: a single-file app's bundle holds it, or the trace came from another machine. Its PDB
    // may still be on disk, beside the bundle (where a single-file publish puts it) or where the build wrote it; it is
    // taken only when its id is the one the runtime reported for the module.
    private static (MetadataReaderProvider? Pdb, string? Missing) OpenPdbWithoutModule(IlLocation location, IReadOnlyList<string> symbolDirectories)
    {
        var (modulePath, signature, buildPath) = (location.Module!.Path, location.Module.PdbSignature, location.Module.PdbBuildPath);
        if (signature == Guid.Empty)
        {
            return (null, $"{modulePath} is not on disk and the trace does not give its PDB's id");
        }

        string?[] candidates = [Path.ChangeExtension(modulePath, ".pdb"), buildPath, .. InSymbolDirectories(Path.ChangeExtension(modulePath, ".pdb"), symbolDirectories)];
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

    // The PDB beside the module, when its id is the one the runtime reported for the module the process ran: a module
    // rebuilt since the trace or the dump was taken has another build's lines. Else the matching PDB at the build's path
    // or in the folders given, if there is one.
    private (MetadataReaderProvider? Pdb, string? Missing) OpenPdbOfTheBuildThatRan(IlLocation location)
    {
        var (pdb, missing) = OpenPdb(location.Module!.Path);
        var signature = location.Module.PdbSignature;
        if (pdb is null || signature == Guid.Empty
            || (pdb.GetMetadataReader().DebugMetadataHeader?.Id is { Length: >= 16 } id && new Guid(id.AsSpan(0, 16)) == signature))
        {
            return (pdb, missing);
        }

        pdb.Dispose();
        var (elsewhere, _) = OpenPdbWithoutModule(location, symbolDirectories);
        return elsewhere is not null
            ? (elsewhere, null)
            : (null, $"{Path.GetFileName(location.Module.Path)} was rebuilt since the process ran it (its PDB's id is not the one the runtime reported): its lines would be another build's; keep the build the process ran, or pass its PDBs with --symbols");
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
            if (pe.TryOpenAssociatedPortablePdb(modulePath, path => InSymbolDirectories(path, symbolDirectories).Prepend(path).FirstOrDefault(File.Exists) is { } found ? File.OpenRead(found) : null, out var pdb, out _) && pdb is not null)
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

    // A PDB of the same file name in each folder given, in order.
    private static IEnumerable<string> InSymbolDirectories(string pdbPath, IReadOnlyList<string> symbolDirectories) =>
        symbolDirectories.Select(folder => Path.Combine(folder, Path.GetFileName(pdbPath.Replace('\\', '/'))));

    public void Dispose()
    {
        foreach (var (pdb, _) in _pdbs.Values)
        {
            pdb?.Dispose();
        }
    }

    private PEReader? Module(string modulePath) => modules.Open(modulePath);
}
