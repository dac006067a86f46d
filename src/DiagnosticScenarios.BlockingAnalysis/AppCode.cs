using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using System.Text.Json;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>Whether a module's frames are the app's own code, and the rule that decided it.</summary>
/// <param name="Module">The module's name, e.g. <c>DiagnosticScenarios</c>.</param>
/// <param name="Path">Its file as the trace names it; null for dynamic methods.</param>
/// <param name="IsApp">Whether its frames are the app's.</param>
/// <param name="Rule">What decided, e.g. "project in DiagnosticScenarios.deps.json".</param>
public sealed record ModuleVerdict(string Module, string? Path, bool IsApp, string Rule)
{
    /// <summary>How the rule of a module that <c>--app</c> did not name begins.</summary>
    public const string AppGivenRule = "--app given:";
}

/// <summary>
/// Just My Code without configuration: a frame is the app's when its module is not the runtime, the shared framework, a
/// package or a method compiled at run time, as the trace's module path, the <c>.deps.json</c> beside the module and the
/// assembly's strong-name identity tell. Prefixes given by the user (<see cref="DiagnosisOptions.AppPrefixes"/>) override it.
/// </summary>
internal sealed class AppCode
{
    // Microsoft's strong-name public key tokens: the runtime and its libraries, ASP.NET Core, the extensions. A
    // self-contained app carries the framework beside itself, where no path tells it apart; its identity does.
    private static readonly HashSet<string> MicrosoftKeyTokens = new(StringComparer.OrdinalIgnoreCase)
    {
        "b77a5c561934e089", "b03f5f7f11d50a3a", "31bf3856ad364e35", "adb9793829ddae60", "7cec85d7bea7798e", "cc7b13ffcd2ddd51",
    };

    // The parts of a deps.json library that name assemblies that get loaded.
    private static readonly string[] AssetKinds = ["runtime", "native"];

    private static readonly string DiagnosisAssembly = typeof(AppCode).Assembly.GetName().Name!;

    private readonly IReadOnlyList<string> _prefixes;
    private readonly Dictionary<string, ModuleVerdict> _verdicts = new(StringComparer.Ordinal);
    // Modules that hold frames under a namespace given with --app, and the prefix: their own verdict is "not the app's", and
    // the report says which of their frames were taken for the app's instead.
    private readonly Dictionary<string, string> _namespaceMatches = new(StringComparer.Ordinal);
    private readonly Dictionary<string, IReadOnlyDictionary<string, (string Type, string DepsFile)>> _depsByDirectory = new(StringComparer.Ordinal);
    private readonly string? _sharedFramework;
    private readonly Dictionary<string, ModuleImage?> _images = new(StringComparer.Ordinal);
    private readonly Func<string, string?> _assemblyOf;
    private readonly ModuleReaders _modules;

    /// <param name="prefixes">Namespaces or assembly names that are the app's, overriding the automatic rule; empty for none.</param>
    /// <param name="coreLibPath">Where the trace says System.Private.CoreLib is: the shared framework is the folder above its version folder.</param>
    /// <param name="modules">The module files, read here for their identity and build, and by the line lookup for their PDB.</param>
    /// <param name="assemblyOf">
    /// A module file's assembly identity as the trace names it, or null: what tells a framework module from the app's
    /// where no file is on disk to read (a self-contained single-file app keeps the framework in its bundle).
    /// </param>
    public AppCode(IReadOnlyList<string> prefixes, string? coreLibPath, ModuleReaders modules, Func<string, string?>? assemblyOf = null)
    {
        _prefixes = prefixes;
        _modules = modules;
        _assemblyOf = assemblyOf ?? (_ => null);
        var runtimeFolder = coreLibPath is null ? null : Directory.GetParent(coreLibPath);
        var shared = runtimeFolder?.Parent?.Parent;
        _sharedFramework = shared is { Name: "shared" } ? shared.FullName + Path.DirectorySeparatorChar : null;
    }

    /// <summary>The verdicts of the modules asked about so far, the app's first.</summary>
    public IReadOnlyList<ModuleVerdict> Verdicts =>
        _verdicts.Select(entry => _namespaceMatches.TryGetValue(entry.Key, out var prefix)
                ? entry.Value with { IsApp = true, Rule = $"--app {prefix} (namespace): its frames under {prefix}" }
                : entry.Value)
            .OrderByDescending(v => v.IsApp).ThenBy(v => v.Module, StringComparer.Ordinal).ToList();

    /// <summary>Whether <paramref name="frame"/> is the app's code.</summary>
    public bool IsApp(TraceFrame frame)
    {
        var verdict = Verdict(frame.ModuleName, frame.ModulePath);
        if (verdict.IsApp)
        {
            return true;
        }

        var prefix = IsDiagnosis(frame.ModuleName) ? null : _prefixes.FirstOrDefault(p => IsUnder(frame.MethodName, p));
        if (prefix is not null)
        {
            _namespaceMatches.TryAdd(frame.ModulePath ?? frame.ModuleName, prefix);
        }

        return prefix is not null;
    }

    /// <summary>
    /// Whether the JIT may inline the module's methods: false for a Debug build, whose DebuggableAttribute turns the
    /// optimizer off (what <c>dotnet run</c> builds), true otherwise.
    /// </summary>
    public bool IsOptimized(string? modulePath)
    {
        if (modulePath is null)
        {
            return true;
        }

        return Image(modulePath) is not { OptimizerDisabled: true };
    }

    /// <summary>
    /// Whether the module at <paramref name="path"/> is the app's by the automatic rule or an assembly name given with
    /// <c>--app</c>, without listing it among the report's modules: where the app's endpoints are declared.
    /// </summary>
    public bool IsAppModule(string path) =>
        !IsDiagnosis(Path.GetFileNameWithoutExtension(path)) && (_verdicts.TryGetValue(path, out var known) ? known : Decide(Path.GetFileNameWithoutExtension(path), path)).IsApp;

    private ModuleVerdict Verdict(string module, string? path)
    {
        var key = path ?? module;
        if (!_verdicts.TryGetValue(key, out var verdict))
        {
            verdict = Decide(module, path);
            _verdicts[key] = verdict;
        }

        return verdict;
    }

    private ModuleVerdict Decide(string module, string? path)
    {
        if (path is null || !Path.IsPathRooted(path))
        {
            return new(module, null, false, "dynamic methods (compiled at run time, e.g. ASP.NET Core's invokers)");
        }

        if (IsDiagnosis(module))
        {
            return new(module, path, false, "the diagnosis library itself");
        }

        if (_prefixes.Count > 0)
        {
            var match = _prefixes.FirstOrDefault(p => string.Equals(p, module, StringComparison.OrdinalIgnoreCase));
            return match is not null
                ? new(module, path, true, $"--app {match} (assembly name)")
                : new(module, path, false, $"{ModuleVerdict.AppGivenRule} only frames whose namespace starts with {string.Join(" or ", _prefixes)}");
        }

        if (_sharedFramework is not null && path.StartsWith(_sharedFramework, StringComparison.Ordinal))
        {
            return new(module, path, false, $"shared framework ({_sharedFramework})");
        }

        // What the build wrote beside the module first: a .NET tool (dotnet tool run, dnx) runs from the NuGet cache, its
        // own code a project in the .deps.json of its tools/TFM/any/ folder, its packages beside it.
        if (Deps(Path.GetDirectoryName(path)!).TryGetValue(Path.GetFileName(path), out var library)
            || (RidSpecific(path) is var (root, relative) && Deps(root).TryGetValue(relative, out library)))
        {
            return new(module, path, library.Type == "project", $"{library.Type} in {library.DepsFile}");
        }

        if (path.Contains($"{Path.DirectorySeparatorChar}.nuget{Path.DirectorySeparatorChar}packages{Path.DirectorySeparatorChar}", StringComparison.OrdinalIgnoreCase))
        {
            return new(module, path, false, "NuGet package cache");
        }

        return KeyToken(path) is { } token && MicrosoftKeyTokens.Contains(token)
            ? new(module, path, false, $"signed with Microsoft's key (public key token {token})")
            : new(module, path, true, "not the runtime, the shared framework or a package");
    }

    // A package's assembly for some platforms only (Microsoft.Data.SqlClient's for Unix) is loaded from
    // runtimes/RID/lib/TFM/ under the app's folder, whose .deps.json lists it by that path among the package's
    // runtimeTargets: the folder above "runtimes", and the path from there. Null for any other module.
    private static (string Root, string Relative)? RidSpecific(string path)
    {
        var marker = $"{Path.DirectorySeparatorChar}runtimes{Path.DirectorySeparatorChar}";
        var at = path.LastIndexOf(marker, StringComparison.Ordinal);
        return at <= 0 ? null : (path[..at], path[(at + 1)..].Replace(Path.DirectorySeparatorChar, '/'));
    }

    private static bool IsDiagnosis(string module) => string.Equals(module, DiagnosisAssembly, StringComparison.Ordinal);

    // A namespace prefix matches whole names: "Contoso" covers Contoso.Orders and Contoso+Nested, not ContosoLegacy.
    private static bool IsUnder(string method, string prefix) =>
        method.StartsWith(prefix, StringComparison.Ordinal)
        && (method.Length == prefix.Length || method[prefix.Length] is '.' or '+' || prefix.EndsWith('.'));

    // File name -> (library type, deps file) for every .deps.json in a folder: what the build said each assembly is. A
    // folder may hold several (a test project's output has one for each project it references); they are read in name
    // order and the first that lists a file decides, so the rule the report prints does not depend on the file system's order.
    private IReadOnlyDictionary<string, (string Type, string DepsFile)> Deps(string directory)
    {
        if (_depsByDirectory.TryGetValue(directory, out var deps))
        {
            return deps;
        }

        var files = new Dictionary<string, (string Type, string DepsFile)>(StringComparer.OrdinalIgnoreCase);
        foreach (var depsFile in Directory.Exists(directory) ? Directory.EnumerateFiles(directory, "*.deps.json").Order(StringComparer.Ordinal) : Enumerable.Empty<string>())
        {
            try
            {
                using var json = JsonDocument.Parse(File.ReadAllText(depsFile));
                if (!json.RootElement.TryGetProperty("libraries", out var libraries) || !json.RootElement.TryGetProperty("targets", out var targets))
                {
                    continue;
                }

                foreach (var target in targets.EnumerateObject())
                {
                    foreach (var library in target.Value.EnumerateObject())
                    {
                        var type = libraries.TryGetProperty(library.Name, out var entry) && entry.TryGetProperty("type", out var t) ? t.GetString() ?? "unknown" : "unknown";
                        foreach (var assets in AssetKinds.Select(a => library.Value.TryGetProperty(a, out var v) ? v : default).Where(v => v.ValueKind == JsonValueKind.Object))
                        {
                            foreach (var asset in assets.EnumerateObject())
                            {
                                files.TryAdd(Path.GetFileName(asset.Name), (type, Path.GetFileName(depsFile)));
                            }
                        }

                        // Those for some platforms only, by their path under the folder ("runtimes/unix/lib/net9.0/…").
                        if (library.Value.TryGetProperty("runtimeTargets", out var targeted) && targeted.ValueKind == JsonValueKind.Object)
                        {
                            foreach (var asset in targeted.EnumerateObject())
                            {
                                files.TryAdd(asset.Name, (type, Path.GetFileName(depsFile)));
                            }
                        }
                    }
                }
            }
            catch (Exception e) when (e is JsonException or IOException or UnauthorizedAccessException or InvalidOperationException)
            {
                // An unreadable deps file says nothing; the identity rule still applies.
            }
        }

        _depsByDirectory[directory] = files;
        return files;
    }

    // An assembly's public key token, from its identity: read from the file's metadata where the file is on disk, else as
    // the loader's events name it ("Name, Version=…, Culture=…, PublicKeyToken=…"); null when unsigned or unknown.
    private string? KeyToken(string path) =>
        (Image(path)?.Identity ?? IdentityInTrace(_assemblyOf(path)))?.GetPublicKeyToken() is { Length: > 0 } token ? Convert.ToHexStringLower(token) : null;

    private static AssemblyName? IdentityInTrace(string? name)
    {
        try
        {
            return name is null ? null : new AssemblyName(name);
        }
        catch (Exception e) when (e is FileLoadException or ArgumentException)
        {
            return null;
        }
    }

    // What the module's file says of itself, read once: its identity and whether its build turned the JIT's optimizer off.
    private ModuleImage? Image(string path)
    {
        if (!_images.TryGetValue(path, out var image))
        {
            image = ModuleImage.Read(_modules.Open(path));
            _images[path] = image;
        }

        return image;
    }

    private sealed record ModuleImage(AssemblyName Identity, bool OptimizerDisabled)
    {
        public static ModuleImage? Read(PEReader? pe)
        {
            try
            {
                if (pe is not { HasMetadata: true })
                {
                    return null;
                }

                var reader = pe.GetMetadataReader();
                var assembly = reader.GetAssemblyDefinition();
                return new ModuleImage(assembly.GetAssemblyName(), DisablesOptimizations(reader, assembly));
            }
            catch (Exception e) when (e is BadImageFormatException or IOException or UnauthorizedAccessException or InvalidOperationException)
            {
                return null;
            }
        }

        // The compiler's [assembly: Debuggable(DebuggingModes)]: a Debug build sets DisableOptimizations (0x100). The older
        // constructor takes two bools, the second "JIT optimizer disabled".
        private static bool DisablesOptimizations(MetadataReader reader, AssemblyDefinition assembly)
        {
            const int disableOptimizations = 0x100;
            foreach (var handle in assembly.GetCustomAttributes())
            {
                var attribute = reader.GetCustomAttribute(handle);
                if (attribute.Constructor.Kind != HandleKind.MemberReference
                    || reader.GetMemberReference((MemberReferenceHandle)attribute.Constructor).Parent is not { Kind: HandleKind.TypeReference } parent
                    || reader.GetString(reader.GetTypeReference((TypeReferenceHandle)parent).Name) != "DebuggableAttribute")
                {
                    continue;
                }

                // The blob: a 2-byte prolog, the arguments, a 2-byte count of named arguments.
                var value = reader.GetBlobBytes(attribute.Value);
                return value.Length switch
                {
                    8 => (BitConverter.ToInt32(value, 2) & disableOptimizations) != 0,
                    6 => value[3] != 0,
                    _ => false,
                };
            }

            return false;
        }
    }
}
