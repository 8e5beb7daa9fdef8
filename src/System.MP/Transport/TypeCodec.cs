using System.Collections.Generic;
using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Text;

namespace System.MP.Transport;

/// <summary>
/// How one runtime type travels: the sender writes an object's body, the
/// receiver creates the object (pass 1) and fills its references (pass 2).
/// One codec per type, built once by <see cref="Codecs.For"/>.
/// </summary>
internal abstract unsafe class TypeCodec
{
    protected TypeCodec(Type type) => Type = type;

    internal Type Type { get; }

    /// <summary>Hash of the field layout, sent with named types and checked by the receiver.</summary>
    internal ulong LayoutHash { get; init; }

    /// <summary>False for types that are only named (object, abstract classes): no payload may instantiate them.</summary>
    internal virtual bool IsInstantiable => true;

    /// <summary>Writes the body of <paramref name="obj"/> (its type entry is already written).</summary>
    internal abstract void Write(ObjectWriter writer, object obj);

    /// <summary>
    /// Pass 1: reads the body, creates the object, fills it when it holds no
    /// references, otherwise defers it to pass 2 with <see cref="ObjectReader.Defer"/>.
    /// </summary>
    internal abstract object Create(ObjectReader reader);

    /// <summary>Pass 2: fills the fields or elements of an object from its body, once every object exists.</summary>
    internal virtual void Fill(ObjectReader reader, object obj, byte* body)
    {
    }
}

/// <summary>
/// Eligibility and the codec cache.  Eligible: primitives, decimal, enums,
/// strings, classes and structs marked [Transportable] (classes: every base
/// class too), and arrays of those (or of object or an interface, whose
/// elements must be eligible themselves).  Everything else — file
/// handles, streams, delegates, unmarked user types — is refused with a
/// <see cref="TransportException"/> naming the type.
/// </summary>
[RequiresDynamicCode(DynamicCodeMessage)]
[RequiresUnreferencedCode(DynamicCodeMessage)]
internal static class Codecs
{
    internal const string DynamicCodeMessage =
        "Object transport generates each type's encoder at run time and reads fields by reflection once per type; it is not available under NativeAOT or trimming.";

    private static readonly ConcurrentDictionary<Type, object> s_cache = new();

    /// <summary>The codec of <paramref name="type"/>; throws <see cref="TransportException"/> when it may not travel.</summary>
    internal static TypeCodec For(Type type)
    {
        object c = s_cache.TryGetValue(type, out object? cached) ? cached : s_cache.GetOrAdd(type, Build(type));
        return c as TypeCodec ?? throw new TransportException((string)c);
    }

    /// <summary>A codec, or the reason the type may not travel.</summary>
    private static object Build(Type t)
    {
        try
        {
            return BuildCore(t);
        }
        catch (TransportException e)
        {
            return e.Message;
        }
    }

    private static object BuildCore(Type t)
    {
        if (t == typeof(object) || (t.IsInterface && !t.IsGenericTypeDefinition))
            return new NamedOnlyCodec(t); // element, field and argument types only: never instantiated
        if (t == typeof(string))
            return new StringCodec();
        if (WireFormat.BuiltinCode(t) >= 0 || t.IsEnum)
            return Generic(typeof(ScalarCodec<>), t);
        if (t.IsArray)
            return ArrayFor(t);
        if (t.IsPointer || t.IsByRef || t.IsByRefLike || t.IsGenericTypeDefinition ||
            t.IsFunctionPointer || !t.IsDefined(typeof(TransportableAttribute), inherit: false))
            return SR.Format(SR.NotTransportable, TransportErrors.Name(t));
        if (t.IsGenericType)
            foreach (Type arg in t.GetGenericArguments())
                For(arg);
        if (t.IsValueType)
            return Generic(typeof(StructCodec<>), t);
        for (Type? b = t.BaseType; b is not null && b != typeof(object); b = b.BaseType)
            if (!b.IsDefined(typeof(TransportableAttribute), inherit: false))
                return SR.Format(SR.BaseNotTransportable, TransportErrors.Name(t), TransportErrors.Name(b));
        return t.IsAbstract ? new NamedOnlyCodec(t, LayoutOf(t)) : new ClassCodec(t);
    }

    private static object ArrayFor(Type t)
    {
        Type e = t.GetElementType()!;
        For(e);
        Type kind = !e.IsValueType ? typeof(ReferenceArrayCodec<>)
            : ContainsReferences(e) ? typeof(StructArrayCodec<>)
            : typeof(BlockArrayCodec<>);
        return Activator.CreateInstance(kind.MakeGenericType(e), t)!;
    }

    private static TypeCodec Generic(Type definition, Type t) =>
        (TypeCodec)Activator.CreateInstance(definition.MakeGenericType(t))!;

    /// <summary>The layout hash of a class or struct (abstract classes are named by it too).</summary>
    internal static ulong LayoutOf(Type t) =>
        CodecEmitter.LayoutHash(t, CodecEmitter.Flatten(t, out int bytes), bytes);

    private static readonly MethodInfo s_containsReferences =
        typeof(RuntimeHelpers).GetMethod(nameof(RuntimeHelpers.IsReferenceOrContainsReferences))!;

    private static readonly ConcurrentDictionary<Type, bool> s_references = new();

    internal static bool ContainsReferences(Type t) =>
        s_references.GetOrAdd(t, static x => (bool)s_containsReferences.MakeGenericMethod(x).Invoke(null, null)!);
}
