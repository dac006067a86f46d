using System.Buffers.Binary;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>
/// What a file given as a dump is, checked before ClrMD reads it: a Linux core dump (ELF), whole; a minidump or a macOS
/// core is taken as it is. A file that is something else, or an ELF core cut short, is refused with one line saying so.
/// </summary>
public static class DumpFiles
{
    private const ushort ElfCore = 4;
    private const int ElfHeaderSize = 64;

    /// <summary>Refuses a file that is missing, not a dump, or an ELF core whose segments run past its end.</summary>
    /// <exception cref="DiagnosisException">The file is not a whole dump; the message says what it is.</exception>
    public static void Check(string path)
    {
        if (!File.Exists(path))
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump, $"There is no file at {Path.GetFullPath(path)}.");
        }

        var header = Header(path);
        if (IsMinidump(header) || IsMachOCore(header))
        {
            return;
        }

        if (!header.AsSpan().StartsWith("\u007fELF"u8))
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump,
                $"{path} is not a core dump: it is not an ELF core (what dotnet-dump collect and createdump write on Linux), nor a minidump.");
        }

        if (header.Length < ElfHeaderSize || header[4] != 2)
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump, $"{path} is cut short or not a 64-bit ELF core: its header is incomplete.");
        }

        if (!IsElfCore(header))
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump,
                $"{path} is an ELF file but not a core dump (an executable or a library): give the file dotnet-dump collect or createdump wrote.");
        }

        var length = new FileInfo(path).Length;
        var needed = ElfExtent(path, header);
        if (needed > length)
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump,
                $"{path} is cut short: its headers describe {needed:N0} bytes, the file has {length:N0} (the dump was interrupted while written or copied, or the disk filled up).");
        }
    }

    // The end of the last segment or of the program headers, whichever is further.
    private static long ElfExtent(string path, byte[] header)
    {
        var programHeaders = (long)BinaryPrimitives.ReadUInt64LittleEndian(header.AsSpan(32));
        var entrySize = BinaryPrimitives.ReadUInt16LittleEndian(header.AsSpan(54));
        var entries = BinaryPrimitives.ReadUInt16LittleEndian(header.AsSpan(56));
        var extent = programHeaders + ((long)entrySize * entries);
        using var file = File.OpenRead(path);
        if (extent > file.Length || entrySize < 48)
        {
            return Math.Max(extent, ElfHeaderSize);
        }

        var table = new byte[entrySize * entries];
        file.Position = programHeaders;
        file.ReadExactly(table);
        for (var i = 0; i < entries; i++)
        {
            var entry = table.AsSpan(i * entrySize);
            var offset = (long)BinaryPrimitives.ReadUInt64LittleEndian(entry[8..]);
            var size = (long)BinaryPrimitives.ReadUInt64LittleEndian(entry[32..]);
            extent = Math.Max(extent, offset + size);
        }

        return extent;
    }

    private static bool IsElfCore(byte[] header) =>
        header.Length >= ElfHeaderSize && header.AsSpan().StartsWith("\u007fELF"u8) && BinaryPrimitives.ReadUInt16LittleEndian(header.AsSpan(16)) == ElfCore;

    private static bool IsMinidump(byte[] header) => header.AsSpan().StartsWith("MDMP"u8);

    // MH_MAGIC_64 and the file type MH_CORE.
    private static bool IsMachOCore(byte[] header) =>
        header.Length >= 16 && BinaryPrimitives.ReadUInt32LittleEndian(header) == 0xFEEDFACF && BinaryPrimitives.ReadUInt32LittleEndian(header.AsSpan(12)) == 4;

    private static byte[] Header(string path)
    {
        try
        {
            using var file = File.OpenRead(path);
            var header = new byte[Math.Min(ElfHeaderSize, file.Length)];
            file.ReadExactly(header);
            return header;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new DiagnosisException(DiagnosisFailure.UnreadableDump, $"{path} could not be read: {e.Message}", e);
        }
    }
}
