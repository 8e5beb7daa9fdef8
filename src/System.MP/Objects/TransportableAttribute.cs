namespace System.MP;

/// <summary>
/// Marks a class or struct whose instances may travel in object operations
/// (OSend/ORecv, OBcast, OScatter/OGather), and, on a
/// reference field, that the field is followed.  Value fields always travel;
/// unmarked reference fields arrive null.
/// </summary>
[AttributeUsage(AttributeTargets.Class | AttributeTargets.Struct | AttributeTargets.Field, Inherited = false)]
public sealed class TransportableAttribute : Attribute { }
