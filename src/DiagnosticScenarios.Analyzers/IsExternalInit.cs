namespace System.Runtime.CompilerServices;

/// <summary>What records' init accessors need, which netstandard2.0 lacks.</summary>
internal static class IsExternalInit
{
}
