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

    /// <summary>The codec of vectors of this type (T[]), when the registry has it.</summary>
    internal TypeCodec? Vector { get; set; }

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
/// class too), List&lt;T&gt;, HashSet&lt;T&gt; and Dictionary&lt;TKey,TValue&gt;
/// of those (exactly these classes, not classes derived from them), and arrays
/// of all these (or of object or an interface, whose elements must be eligible themselves).  Everything else — file
/// handles, streams, delegates, unmarked user types — is refused with a
/// <see cref="TransportException"/> naming the type.
/// </summary>
/// <remarks>
/// A codec comes from <see cref="CodecRegistry"/> when it has one (built-in types, and the codecs
/// the System.MP source generator wrote at compile time); otherwise it is built at run time
/// (<see cref="CodecEmitter"/>: IL in a DynamicMethod), which needs the JIT: under NativeAOT such a
/// type is refused with a message that says why.  MOTOR_OBJECT_CODECS=runtime (or
/// <see cref="RunTimeOnlyForTests"/> on a thread) ignores the generated codecs, so that tests can
/// compare both paths.
/// </remarks>
internal static class Codecs
{
    internal const string DynamicCodeMessage =
        "A codec built at run time generates its encoder as IL and reads fields by reflection; under NativeAOT or trimming only the codecs the System.MP source generator wrote are used.";

    private static readonly ConcurrentDictionary<Type, object> s_cache = new();
    private static readonly ConcurrentDictionary<Type, object> s_runTimeCache = new();

    private static readonly bool s_runTimeOnly =
        string.Equals(Environment.GetEnvironmentVariable("MOTOR_OBJECT_CODECS"), "runtime", StringComparison.OrdinalIgnoreCase);

    /// <summary>On this thread, codecs are built at run time even where generated ones exist (tests compare the two).</summary>
    [ThreadStatic]
    internal static bool RunTimeOnlyForTests;

    private static bool RunTimeOnly => s_runTimeOnly || RunTimeOnlyForTests;

    /// <summary>The codec of <paramref name="type"/>; throws <see cref="TransportException"/> when it may not travel.</summary>
    internal static TypeCodec For(Type type)
    {
        bool runTimeOnly = RunTimeOnly;
        ConcurrentDictionary<Type, object> cache = runTimeOnly ? s_runTimeCache : s_cache;
        object c = cache.TryGetValue(type, out object? cached) ? cached : cache.GetOrAdd(type, Build(type, runTimeOnly));
        return c as TypeCodec ?? throw new TransportException((string)c);
    }

    /// <summary>The codec of vectors of <paramref name="element"/> (T[] from T's codec, without building the array type when registered).</summary>
    internal static TypeCodec VectorOf(Type element, TypeCodec elementCodec)
        => elementCodec.Vector ?? For(RunTimeArrayType(element, 1, vector: true));

    /// <summary>A codec, or the reason the type may not travel.</summary>
    private static object Build(Type t, bool runTimeOnly)
    {
        try
        {
            if (CodecRegistry.Find(t, generated: !runTimeOnly) is TypeCodec known)
                return known;
            return RuntimeFeature.IsDynamicCodeSupported ? BuildAtRunTime(t) : NoCompileTimeCodec(t);
        }
        catch (TransportException e)
        {
            return e.Message;
        }
    }

    /// <summary>The refusal, under NativeAOT, of a type the source generator wrote no codec for.</summary>
    internal static string NoCompileTimeCodec(Type t) => SR.Format(SR.NoCompileTimeCodec, TransportErrors.Name(t));

    private static string NoCompileTimeCodec(string typeName) => SR.Format(SR.NoCompileTimeCodec, typeName);

    /// <summary>An array type built at run time (the registry has the vectors of every type it knows).</summary>
    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Reached only when dynamic code is supported; under NativeAOT the refusal says why.")]
    internal static Type RunTimeArrayType(Type element, int rank, bool vector)
    {
        if (!RuntimeFeature.IsDynamicCodeSupported)
            throw new TransportException(NoCompileTimeCodec(TransportErrors.Name(element) + (vector ? "[]" : "[" + new string(',', rank - 1) + "]")));
        return vector ? element.MakeArrayType() : element.MakeArrayType(rank);
    }

    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Called only when RuntimeFeature.IsDynamicCodeSupported.")]
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Types with a generated codec never come here; the others' fields are read by reflection, as documented for trimmed apps.")]
    private static object BuildAtRunTime(Type t) => BuildCore(t);

    [RequiresDynamicCode(DynamicCodeMessage)]
    [RequiresUnreferencedCode(DynamicCodeMessage)]
    private static object BuildCore(Type t)
    {
        if (t.IsInterface && !t.IsGenericTypeDefinition)
            return new NamedOnlyCodec(t); // element, field and argument types only: never instantiated
        if (t.IsEnum)
            return Generic(typeof(ScalarCodec<>), t);
        if (t.IsArray)
            return ArrayFor(t);
        if (CollectionCodecs.EntryKindOf(t) is byte collection and not 0)
            return CollectionFor(collection, t);
        if (t.IsPointer || t.IsByRef || t.IsByRefLike || t.IsGenericTypeDefinition ||
            t.IsFunctionPointer || !t.IsDefined(typeof(TransportableAttribute), inherit: false))
            return SR.Format(SR.NotTransportable, TransportErrors.Name(t));
        if (t.IsGenericType)
            foreach (Type arg in t.GetGenericArguments())
                For(arg);
        if (t.IsValueType)
            return Activator.CreateInstance(typeof(StructCodec<>).MakeGenericType(t), StructShapeFor(t))!;
        for (Type? b = t.BaseType; b is not null && b != typeof(object); b = b.BaseType)
            if (!b.IsDefined(typeof(TransportableAttribute), inherit: false))
                return SR.Format(SR.BaseNotTransportable, TransportErrors.Name(t), TransportErrors.Name(b));
        return t.IsAbstract ? new NamedOnlyCodec(t, LayoutOf(t)) : new ClassCodec(t);
    }

    [RequiresDynamicCode(DynamicCodeMessage)]
    [RequiresUnreferencedCode(DynamicCodeMessage)]
    private static object ArrayFor(Type t)
    {
        Type e = t.GetElementType()!;
        For(e);
        if (!e.IsValueType)
            return Activator.CreateInstance(typeof(ReferenceArrayCodec<>).MakeGenericType(e), t)!;
        if (!ContainsReferences(e))
            return Activator.CreateInstance(typeof(BlockArrayCodec<>).MakeGenericType(e), t)!;
        return Activator.CreateInstance(typeof(StructArrayCodec<>).MakeGenericType(e), t, StructShapeFor(e))!;
    }

    /// <summary>The codec of a List&lt;T&gt;, HashSet&lt;T&gt; or Dictionary&lt;TKey,TValue&gt;, whose element types may travel.</summary>
    [RequiresDynamicCode(DynamicCodeMessage)]
    [RequiresUnreferencedCode(DynamicCodeMessage)]
    private static object CollectionFor(byte kind, Type t)
    {
        Type[] args = t.GetGenericArguments();
        foreach (Type arg in args)
            For(arg);
        Type definition = kind switch
        {
            WireFormat.EntryList => typeof(ListCodec<>),
            WireFormat.EntryHashSet => typeof(HashSetCodec<>),
            _ => typeof(DictionaryCodec<,>),
        };
        return Activator.CreateInstance(definition.MakeGenericType(args))!;
    }

    /// <summary>
    /// The list, set or dictionary type of a payload's type entry (its element types already
    /// checked): a registered one (the source generator registers each that a field names), else
    /// built at run time.
    /// </summary>
    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Reached only when dynamic code is supported; under NativeAOT the refusal says why.")]
    [UnconditionalSuppressMessage("Trimming", "IL2055", Justification = "List, HashSet and Dictionary of element types a payload names, whose codecs work on them as the run-time path documents.")]
    internal static Type CollectionType(byte kind, Type first, Type? second)
    {
        if (CodecRegistry.FindCollection(kind, first, second) is Type known)
            return known;
        Type definition = CollectionCodecs.DefinitionOf(kind);
        if (!RuntimeFeature.IsDynamicCodeSupported)
            throw new TransportException(NoCompileTimeCodec(TransportErrors.Name(definition).Replace("<>", "<" + TransportErrors.Name(first) + (second is null ? "" : ", " + TransportErrors.Name(second)) + ">", StringComparison.Ordinal)));
        return second is null ? definition.MakeGenericType(first) : definition.MakeGenericType(first, second);
    }

    /// <summary>The run-time shape of the struct <paramref name="t"/> (StructShape&lt;T&gt;.RunTime).</summary>
    [RequiresDynamicCode(DynamicCodeMessage)]
    [RequiresUnreferencedCode(DynamicCodeMessage)]
    private static object StructShapeFor(Type t) =>
        typeof(StructShape<>).MakeGenericType(t).GetProperty("RunTime", BindingFlags.Static | BindingFlags.NonPublic)!.GetValue(null)!;

    [RequiresDynamicCode(DynamicCodeMessage)]
    [RequiresUnreferencedCode(DynamicCodeMessage)]
    private static TypeCodec Generic(Type definition, Type t) =>
        (TypeCodec)Activator.CreateInstance(definition.MakeGenericType(t))!;

    /// <summary>The layout hash of a class or struct (abstract classes are named by it too).</summary>
    [RequiresDynamicCode(DynamicCodeMessage)]
    [RequiresUnreferencedCode(DynamicCodeMessage)]
    internal static ulong LayoutOf(Type t) =>
        CodecEmitter.LayoutHash(t, CodecEmitter.Flatten(t, out int bytes), bytes);

    private static readonly ConcurrentDictionary<Type, bool> s_references = new();

    [RequiresDynamicCode(DynamicCodeMessage)]
    internal static bool ContainsReferences(Type t) =>
        s_references.GetOrAdd(t, static x => (bool)typeof(RuntimeHelpers).GetMethod(nameof(RuntimeHelpers.IsReferenceOrContainsReferences))!
            .MakeGenericMethod(x).Invoke(null, null)!);
}
