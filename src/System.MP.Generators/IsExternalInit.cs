namespace System.Runtime.CompilerServices;

/// <summary>Lets records compile for netstandard2.0, where the compiler finds no such type.</summary>
internal static class IsExternalInit
{
}
