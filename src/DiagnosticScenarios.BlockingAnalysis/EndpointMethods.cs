using System.Reflection;
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Text.RegularExpressions;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>A method of a module, by file and metadata token: the code an endpoint runs.</summary>
public sealed record EndpointMethod(string ModulePath, int MetadataToken);

/// <summary>Where an endpoint's code is: an MVC action, or the handler a minimal API's <c>Map…</c> call was given.</summary>
internal enum EndpointKind
{
    ControllerAction,
    MinimalApiHandler,
}

/// <summary>An endpoint's method as the app's modules declare it, and its name as a frame names it (<c>Type.Method</c>).</summary>
internal sealed record EndpointCode(EndpointMethod Method, string Name, EndpointKind Kind);

/// <summary>
/// The methods an ASP.NET Core app's endpoints run, read from its modules' metadata and IL: a controller action from the
/// endpoint's name as ASP.NET Core gives it (<c>Contoso.Orders.Controllers.OrdersController.Get (Contoso.Orders)</c>), a
/// minimal API's handler from its route (<c>HTTP: GET /stock/{sku}</c>) and the <c>Map…</c> call that registered it.
/// </summary>
internal sealed partial class EndpointMethods(ModuleReaders modules, IEnumerable<string> appModulePaths)
{
    private readonly List<string> _appModules = [.. appModulePaths.Distinct(StringComparer.Ordinal)];
    private List<EndpointCode>? _all;
    private List<MapCall>? _mapCalls;

    /// <summary>The methods an endpoint's name points to; empty when none of the app's modules declares one.</summary>
    public IReadOnlyList<EndpointCode> Find(string endpointName)
    {
        ArgumentNullException.ThrowIfNull(endpointName);
        if (MinimalApiName().Match(endpointName) is { Success: true } route)
        {
            var verbs = route.Groups["verbs"].Value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
            var pattern = Normalized(route.Groups["pattern"].Value);
            var handler = route.Groups["handler"].Success ? route.Groups["handler"].Value : null;
            return [.. MapCalls()
                .Where(call => (call.Verb is null || verbs.Contains(call.Verb, StringComparer.OrdinalIgnoreCase))
                    && (pattern == call.Pattern || pattern.EndsWith("/" + call.Pattern, StringComparison.OrdinalIgnoreCase) || call.Pattern.Length == 0 && pattern.Length == 0)
                    && (handler is null || call.Handler.Name.EndsWith("." + handler, StringComparison.Ordinal)))
                .Select(call => call.Handler)
                .Distinct()];
        }

        if (ActionName().Match(endpointName) is { Success: true } action)
        {
            var type = action.Groups["type"].Value;
            var method = action.Groups["method"].Value;
            var assembly = action.Groups["assembly"].Value;
            return [.. All().Where(code => code.Kind == EndpointKind.ControllerAction
                && string.Equals(Path.GetFileNameWithoutExtension(code.Method.ModulePath), assembly, StringComparison.OrdinalIgnoreCase)
                && FullName(code) == $"{type}.{method}")];
        }

        return [];
    }

    /// <summary>The endpoint code at a method the app itself named; null when its module cannot be read.</summary>
    public EndpointCode? At(EndpointMethod method)
    {
        ArgumentNullException.ThrowIfNull(method);
        if (modules.Open(method.ModulePath) is not { HasMetadata: true } pe
            || MetadataTokens.EntityHandle(method.MetadataToken) is not { Kind: HandleKind.MethodDefinition } handle)
        {
            return null;
        }

        var metadata = pe.GetMetadataReader();
        var definition = (MethodDefinitionHandle)handle;
        var kind = metadata.GetString(metadata.GetMethodDefinition(definition).Name).Contains('<', StringComparison.Ordinal) ? EndpointKind.MinimalApiHandler : EndpointKind.ControllerAction;
        return new EndpointCode(method, IlCalls.TypeAndMethod(metadata, definition), kind);
    }

    /// <summary>Every endpoint method the app's modules declare: their controllers' actions and the handlers of their <c>Map…</c> calls.</summary>
    public IReadOnlyList<EndpointCode> All()
    {
        if (_all is null)
        {
            _all = [];
            foreach (var path in _appModules)
            {
                if (modules.Open(path) is { } pe && pe.HasMetadata)
                {
                    _all.AddRange(Actions(path, pe.GetMetadataReader()));
                }
            }

            _all.AddRange(MapCalls().Select(call => call.Handler).Distinct());
        }

        return _all;
    }

    // "HTTP: GET /stock/{sku}", "HTTP: GET, HEAD /", "HTTP: POST /orders => Create".
    [GeneratedRegex(@"^HTTP: (?<verbs>[A-Z]+(, [A-Z]+)*) (?<pattern>\S*)( => (?<handler>\S+))?$")]
    private static partial Regex MinimalApiName();

    // "Contoso.Orders.Controllers.OrdersController.Get (Contoso.Orders)".
    [GeneratedRegex(@"^(?<type>[^ ()]+)\.(?<method>[^. ()]+) \((?<assembly>[^()]+)\)$")]
    private static partial Regex ActionName();

    private readonly Dictionary<EndpointCode, string> _fullNames = [];

    // The declaring type's namespace and name (nested types joined by '+') and the method: how an action's endpoint is named.
    private string FullName(EndpointCode code)
    {
        if (!_fullNames.TryGetValue(code, out var name))
        {
            var metadata = modules.Open(code.Method.ModulePath)!.GetMetadataReader();
            var definition = metadata.GetMethodDefinition(MetadataTokens.MethodDefinitionHandle(code.Method.MetadataToken));
            name = $"{TypeFullName(metadata, definition.GetDeclaringType())}.{metadata.GetString(definition.Name)}";
            _fullNames[code] = name;
        }

        return name;
    }

    // A controller's public instance methods that are not accessors, constructors or [NonAction]: what MVC makes actions of.
    private static IEnumerable<EndpointCode> Actions(string path, MetadataReader metadata)
    {
        foreach (var typeHandle in metadata.TypeDefinitions)
        {
            var type = metadata.GetTypeDefinition(typeHandle);
            if (!IsController(metadata, type))
            {
                continue;
            }

            foreach (var methodHandle in type.GetMethods())
            {
                var method = metadata.GetMethodDefinition(methodHandle);
                var attributes = method.Attributes;
                if ((attributes & MethodAttributes.MemberAccessMask) != MethodAttributes.Public || (attributes & (MethodAttributes.Static | MethodAttributes.SpecialName | MethodAttributes.Abstract)) != 0
                    || HasAttribute(metadata, method.GetCustomAttributes(), "NonActionAttribute"))
                {
                    continue;
                }

                yield return new EndpointCode(new EndpointMethod(path, MetadataTokens.GetToken(methodHandle)), IlCalls.TypeAndMethod(metadata, methodHandle), EndpointKind.ControllerAction);
            }
        }
    }

    // As MVC discovers controllers: a public, non-abstract, non-generic class that derives from ControllerBase or Controller,
    // carries [Controller] or [ApiController] (on itself or a base declared in the module), or is named …Controller; not [NonController].
    private static bool IsController(MetadataReader metadata, TypeDefinition type)
    {
        var attributes = type.Attributes;
        if ((attributes & TypeAttributes.VisibilityMask) is not (TypeAttributes.Public or TypeAttributes.NestedPublic)
            || (attributes & (TypeAttributes.Abstract | TypeAttributes.Interface)) != 0 || type.GetGenericParameters().Count > 0
            || HasAttribute(metadata, type.GetCustomAttributes(), "NonControllerAttribute"))
        {
            return false;
        }

        if (metadata.GetString(type.Name).EndsWith("Controller", StringComparison.Ordinal))
        {
            return true;
        }

        for (var current = type; ;)
        {
            if (HasAttribute(metadata, current.GetCustomAttributes(), "ControllerAttribute") || HasAttribute(metadata, current.GetCustomAttributes(), "ApiControllerAttribute"))
            {
                return true;
            }

            switch (current.BaseType.Kind)
            {
                case HandleKind.TypeDefinition:
                    current = metadata.GetTypeDefinition((TypeDefinitionHandle)current.BaseType);
                    continue;
                case HandleKind.TypeReference:
                    var reference = metadata.GetTypeReference((TypeReferenceHandle)current.BaseType);
                    return metadata.GetString(reference.Namespace) == "Microsoft.AspNetCore.Mvc" && metadata.GetString(reference.Name) is "ControllerBase" or "Controller";
                default:
                    return false;
            }
        }
    }

    private static bool HasAttribute(MetadataReader metadata, CustomAttributeHandleCollection attributes, string name)
    {
        foreach (var handle in attributes)
        {
            var constructor = metadata.GetCustomAttribute(handle).Constructor;
            var type = constructor.Kind switch
            {
                HandleKind.MemberReference => metadata.GetMemberReference((MemberReferenceHandle)constructor).Parent,
                HandleKind.MethodDefinition => metadata.GetMethodDefinition((MethodDefinitionHandle)constructor).GetDeclaringType(),
                _ => default,
            };
            var typeName = type.Kind switch
            {
                HandleKind.TypeReference => metadata.GetString(metadata.GetTypeReference((TypeReferenceHandle)type).Name),
                HandleKind.TypeDefinition => metadata.GetString(metadata.GetTypeDefinition((TypeDefinitionHandle)type).Name),
                _ => null,
            };
            if (typeName == name)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>A <c>Map…</c> call of the app's code: the route literal it was given, its verb when its name says one, and the handler.</summary>
    private sealed record MapCall(string Pattern, string? Verb, EndpointCode Handler);

    // Every Map… call in the app's modules, from their IL: the last string loaded before the call is its route, and the
    // last method whose address was taken after that string is its handler (a lambda, or a method group). The Request
    // Delegate Generator's interceptors keep that shape: they are called where MapGet was, with the same arguments.
    private List<MapCall> MapCalls()
    {
        if (_mapCalls is not null)
        {
            return _mapCalls;
        }

        _mapCalls = [];
        foreach (var path in _appModules)
        {
            if (modules.Open(path) is not { } pe || !pe.HasMetadata)
            {
                continue;
            }

            var metadata = pe.GetMetadataReader();
            foreach (var methodHandle in metadata.MethodDefinitions)
            {
                var method = metadata.GetMethodDefinition(methodHandle);
                if (method.RelativeVirtualAddress != 0)
                {
                    _mapCalls.AddRange(MapCallsIn(path, pe, metadata, method));
                }
            }
        }

        return _mapCalls;
    }

    private static List<MapCall> MapCallsIn(string path, PEReader pe, MetadataReader metadata, MethodDefinition method)
    {
        var found = new List<MapCall>();
        var il = pe.GetMethodBody(method.RelativeVirtualAddress).GetILReader();
        string? route = null;
        int? handler = null;
        while (il.RemainingBytes > 0)
        {
            var instruction = IlOpcodes.Read(ref il);
            if (instruction.OpCode == OpCodes.Ldstr)
            {
                route = metadata.GetUserString(MetadataTokens.UserStringHandle(il.ReadInt32() & 0x00FFFFFF));
                handler = null;
            }
            else if (instruction.OpCode == OpCodes.Ldftn || instruction.OpCode == OpCodes.Ldvirtftn)
            {
                handler = il.ReadInt32();
            }
            else if (instruction.IsCall)
            {
                var token = il.ReadInt32();
                if (route is not null && handler is { } target && MetadataTokens.EntityHandle(target).Kind == HandleKind.MethodDefinition
                    && IlOpcodes.Target(metadata, token) is { Method: var name } && name.StartsWith("Map", StringComparison.Ordinal))
                {
                    var handle = (MethodDefinitionHandle)MetadataTokens.EntityHandle(target);
                    found.Add(new MapCall(Normalized(route), Verb(name), new EndpointCode(new EndpointMethod(path, target), IlCalls.TypeAndMethod(metadata, handle), EndpointKind.MinimalApiHandler)));
                    (route, handler) = (null, null);
                }
            }
            else
            {
                IlOpcodes.SkipOperand(ref il, instruction);
            }
        }

        return found;
    }

    // MapGet → GET, and the generator's numbered interceptors (MapGet0) likewise; Map, MapMethods and MapFallback name none.
    private static string? Verb(string mapMethod)
    {
        var verb = mapMethod["Map".Length..].TrimEnd("0123456789".ToCharArray());
        return verb is "Get" or "Post" or "Put" or "Delete" or "Patch" ? verb.ToUpperInvariant() : null;
    }

    private static string Normalized(string pattern) => pattern.Trim('/');

    private static string TypeFullName(MetadataReader metadata, TypeDefinitionHandle handle)
    {
        var type = metadata.GetTypeDefinition(handle);
        var outer = type.GetDeclaringType();
        return outer.IsNil
            ? (metadata.GetString(type.Namespace) is { Length: > 0 } ns ? $"{ns}.{metadata.GetString(type.Name)}" : metadata.GetString(type.Name))
            : $"{TypeFullName(metadata, outer)}+{metadata.GetString(type.Name)}";
    }
}
