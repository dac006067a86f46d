using System.IO.Compression;

namespace DiagnosticScenarios.Tests.Diagnosis;

/// <summary>The packed dotnet-blocking, as <c>dotnet tool install</c> downloads it.</summary>
public sealed class ToolPackageTests
{
    /// <summary>
    /// TraceEvent's Windows-only native libraries (ETW's KernelTraceControl, DIA's msdia140, three architectures each) had
    /// been packed with the tool: about 10 of its 15 MB unpacked, for code the diagnosis never calls.
    /// </summary>
    [Fact]
    public void Package_CarriesNoWindowsOnlyNativeLibraryOfTraceEvent()
    {
        var package = Assert.Single(Directory.GetFiles(DotnetBlockingTool.PackageFolder, "dotnet-blocking.*.nupkg"));

        using var zip = ZipFile.OpenRead(package);

        Assert.DoesNotContain(zip.Entries, e => e.Name.Equals("msdia140.dll", StringComparison.OrdinalIgnoreCase) || e.Name.Equals("KernelTraceControl.dll", StringComparison.OrdinalIgnoreCase));
    }
}
