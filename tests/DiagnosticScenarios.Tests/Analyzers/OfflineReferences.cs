using System.Collections.Immutable;
using Microsoft.CodeAnalysis;

namespace DiagnosticScenarios.Tests.Analyzers;

/// <summary>
/// What the analyzer's tests compile against: the test host's own trusted platform assemblies, as the analyzer table
/// compiles the app, so nothing is downloaded at test time (Roslyn's testing libraries fetch reference packs through NuGet
/// by default).
/// </summary>
internal static class OfflineReferences
{
    private static readonly ImmutableArray<string> TrustedAssemblies =
        [.. ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)];

    /// <summary>The .NET runtime alone: a console app, where only the shape rules can fire.</summary>
    public static ImmutableArray<MetadataReference> Runtime { get; } = InFolders(typeof(object));

    /// <summary>Everything the test host runs with: ASP.NET Core's shared framework, its packages, xunit.</summary>
    public static ImmutableArray<MetadataReference> Web { get; } = [.. TrustedAssemblies.Select(path => MetadataReference.CreateFromFile(path))];

    private static ImmutableArray<MetadataReference> InFolders(Type type)
    {
        var folder = Path.GetDirectoryName(type.Assembly.Location);
        return [.. TrustedAssemblies.Where(path => Path.GetDirectoryName(path) == folder).Select(path => MetadataReference.CreateFromFile(path))];
    }
}
