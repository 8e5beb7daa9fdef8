using Microsoft.CodeAnalysis;

namespace System.MP.Generators;

/// <summary>The diagnostics of [Transportable] types (docs/diagnostics.md describes each with an example and its fix).</summary>
internal static class MotorDiagnostics
{
    private const string Category = "System.MP.Transport";
    private const string Docs = "Motor's docs/diagnostics.md describes each System.MP diagnostic, with an example and its fix.";

    private static DiagnosticDescriptor Rule(string id, DiagnosticSeverity severity, string title, string message) =>
        new(id, title, message, Category, severity, isEnabledByDefault: true, description: Docs);

    /// <summary>A followed reference field whose type may not travel: the run-time path refuses the first object stored in it.</summary>
    internal static readonly DiagnosticDescriptor FieldCannotTravel = Rule("MOTOR001", DiagnosticSeverity.Warning, "A [Transportable] field's type cannot travel",
        "Field '{0}' of '{1}' is marked [Transportable], but its type '{2}' cannot travel: {3}");

    /// <summary>A [Transportable] class derived from a class that is not: its base class's fields could not travel.</summary>
    internal static readonly DiagnosticDescriptor BaseNotTransportable = Rule("MOTOR002", DiagnosticSeverity.Warning, "The base class of a [Transportable] class is not [Transportable]",
        "'{0}' is marked [Transportable], but its base class '{1}' is not; mark '{1}' [Transportable] too");

    /// <summary>A followed reference field of an interface type: what is stored in it must be a [Transportable] class, which only run time can check.</summary>
    internal static readonly DiagnosticDescriptor InterfaceField = Rule("MOTOR003", DiagnosticSeverity.Info, "A [Transportable] field has an interface type",
        "Field '{0}' of '{1}' has the interface type '{2}': each object stored in it must be of a [Transportable] class, which is checked only when it is sent");

    /// <summary>[Transportable] on a field of a value type: value fields always travel, the attribute changes nothing.</summary>
    internal static readonly DiagnosticDescriptor ValueFieldMarked = Rule("MOTOR004", DiagnosticSeverity.Warning, "[Transportable] on a value field has no effect",
        "Field '{0}' of '{1}' has the value type '{2}': value fields always travel, so [Transportable] on it has no effect");

    /// <summary>The generator could not write the codec: the run-time path builds it (not available under NativeAOT).</summary>
    internal static readonly DiagnosticDescriptor LeftToRunTime = Rule("MOTOR005", DiagnosticSeverity.Info, "The codec of a [Transportable] type is built at run time",
        "The codec of '{0}' is built at run time, not at compile time ({1}); it is not available under NativeAOT");

    /// <summary>[Transportable] on a type that can never travel.</summary>
    internal static readonly DiagnosticDescriptor TypeCannotTravel = Rule("MOTOR006", DiagnosticSeverity.Error, "This type cannot be [Transportable]",
        "'{0}' cannot travel: {1}");
}
