using System.Reflection.PortableExecutable;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// The module files of one analysis, each opened once for every reader of it (whose code it is, <see cref="AppCode"/>;
/// its PDB and whether it is precompiled, <see cref="SourceLines"/>), and closed together.
/// </summary>
internal sealed class ModuleReaders : IDisposable
{
    private readonly Dictionary<string, PEReader?> _readers = new(StringComparer.Ordinal);

    /// <summary>The module at <paramref name="path"/>, or null when no file is there or it cannot be opened.</summary>
    public PEReader? Open(string path)
    {
        if (!_readers.TryGetValue(path, out var pe))
        {
            try
            {
                pe = File.Exists(path) ? new PEReader(File.OpenRead(path)) : null;
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                pe = null;
            }

            _readers[path] = pe;
        }

        return pe;
    }

    public void Dispose()
    {
        foreach (var pe in _readers.Values)
        {
            pe?.Dispose();
        }
    }
}
