using System.Reflection;
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace DiagnosticScenarios.BlockingAnalysis;

/// <summary>Just enough of an IL reader to find the calls of a method body: each opcode's operand size, and a call's target.</summary>
internal static class IlOpcodes
{
    // Every opcode by its value (one byte, or 0xFE and a second byte), from the runtime's own table of them.
    private static readonly Dictionary<short, OpCode> ByValue = typeof(OpCodes)
        .GetFields(BindingFlags.Public | BindingFlags.Static)
        .Select(f => (OpCode)f.GetValue(null)!)
        .ToDictionary(o => o.Value);

    /// <summary>An opcode as read; a call's operand, the target's token, follows it.</summary>
    public readonly record struct Instruction(OpCode OpCode)
    {
        public bool IsCall => OpCode == OpCodes.Call || OpCode == OpCodes.Callvirt || OpCode == OpCodes.Newobj;
    }

    public static Instruction Read(ref BlobReader il)
    {
        var first = il.ReadByte();
        var value = first == 0xFE ? unchecked((short)(0xFE00 | il.ReadByte())) : first;
        return new Instruction(ByValue.TryGetValue(value, out var opcode) ? opcode : OpCodes.Nop);
    }

    public static void SkipOperand(ref BlobReader il, Instruction instruction)
    {
        var size = instruction.OpCode.OperandType switch
        {
            OperandType.InlineNone => 0,
            OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar => 1,
            OperandType.InlineVar => 2,
            OperandType.InlineI8 or OperandType.InlineR => 8,
            OperandType.InlineSwitch => 4 + (4 * il.ReadInt32()),
            _ => 4,
        };
        // A switch's count has been read already: what is left is its targets.
        if (instruction.OpCode.OperandType == OperandType.InlineSwitch)
        {
            size -= 4;
        }

        il.Offset += size;
    }

    /// <summary>The simple name of a call's target type and its method name, for a method definition, reference or instantiation.</summary>
    public static (string Type, string Method)? Target(MetadataReader metadata, int token)
    {
        var handle = MetadataTokens.EntityHandle(token);
        switch (handle.Kind)
        {
            case HandleKind.MethodDefinition:
                var definition = metadata.GetMethodDefinition((MethodDefinitionHandle)handle);
                return (metadata.GetString(metadata.GetTypeDefinition(definition.GetDeclaringType()).Name), metadata.GetString(definition.Name));
            case HandleKind.MemberReference:
                var reference = metadata.GetMemberReference((MemberReferenceHandle)handle);
                return TypeName(metadata, reference.Parent) is { } type ? (type, metadata.GetString(reference.Name)) : null;
            case HandleKind.MethodSpecification:
                return Target(metadata, MetadataTokens.GetToken(metadata.GetMethodSpecification((MethodSpecificationHandle)handle).Method));
            default:
                return null;
        }
    }

    private static string? TypeName(MetadataReader metadata, EntityHandle parent) => parent.Kind switch
    {
        HandleKind.TypeReference => metadata.GetString(metadata.GetTypeReference((TypeReferenceHandle)parent).Name),
        HandleKind.TypeDefinition => metadata.GetString(metadata.GetTypeDefinition((TypeDefinitionHandle)parent).Name),
        HandleKind.TypeSpecification => GenericTypeName(metadata, metadata.GetTypeSpecification((TypeSpecificationHandle)parent).Signature),
        _ => null,
    };

    // A generic instantiation's signature: GENERICINST, CLASS or VALUETYPE, then the generic type's handle.
    private static string? GenericTypeName(MetadataReader metadata, BlobHandle signature)
    {
        var blob = metadata.GetBlobReader(signature);
        if (blob.ReadSignatureTypeCode() != SignatureTypeCode.GenericTypeInstance)
        {
            return null;
        }

        blob.ReadSignatureTypeCode();
        return TypeName(metadata, blob.ReadTypeHandle());
    }
}
