using System.Collections.Concurrent;
using System.MP.CompilerServices;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Text;

namespace System.MP.Transport;

/// <summary>
/// The codecs that need no code generated at run time: the built-in types and their vectors,
/// and the codecs the System.MP source generator wrote (registered by each assembly's module
/// initializer through <see cref="GeneratedCodecs"/>), each with its vector and, for named types,
/// the name payloads carry.  Everything here works under NativeAOT; <see cref="Codecs"/> looks
/// here first and builds a codec at run time only for what is missing.
/// </summary>
internal static class CodecRegistry
{
    private static readonly ConcurrentDictionary<Type, TypeCodec> s_builtin = new();
    private static readonly ConcurrentDictionary<Type, TypeCodec> s_generated = new();
    private static readonly ConcurrentDictionary<(string Name, string Assembly), Type> s_byName = new();
    private static readonly ConcurrentDictionary<Type, byte[]> s_names = new();
    private static readonly ConcurrentDictionary<Module, bool> s_initialized = new();
    private static readonly ConcurrentDictionary<(byte Kind, Type First, Type? Second), Type> s_collections = new();

    static CodecRegistry()
    {
        AddBuiltin(typeof(object), new NamedOnlyCodec(typeof(object)), new ReferenceArrayCodec<object>(typeof(object[])));
        AddBuiltin(typeof(string), new StringCodec(), new ReferenceArrayCodec<string>(typeof(string[])));
        AddScalar<bool>();
        AddScalar<char>();
        AddScalar<sbyte>();
        AddScalar<byte>();
        AddScalar<short>();
        AddScalar<ushort>();
        AddScalar<int>();
        AddScalar<uint>();
        AddScalar<long>();
        AddScalar<ulong>();
        AddScalar<float>();
        AddScalar<double>();
        AddScalar<decimal>();
        AddScalar<nint>();
        AddScalar<nuint>();
        AddScalar<Half>();
        AddScalar<Int128>();
        AddScalar<UInt128>();
    }

    private static void AddScalar<T>() where T : struct =>
        AddBuiltin(typeof(T), new ScalarCodec<T>(), new BlockArrayCodec<T>(typeof(T[])));

    private static void AddBuiltin(Type t, TypeCodec codec, TypeCodec vector)
    {
        s_builtin[t] = codec;
        s_builtin[vector.Type] = vector;
        codec.Vector = vector;
    }

    internal static void AddClass<T>(GeneratedCodec<T> g) where T : class
    {
        TypeCodec codec = typeof(T).IsAbstract
            ? new NamedOnlyCodec(typeof(T), GeneratedLayoutHash(g, g.BodyBytes))
            : new GeneratedClassCodec<T>(g);
        AddGenerated(codec, new ReferenceArrayCodec<T>(typeof(T[])), g.FullName, g.AssemblyName);
    }

    internal static void AddStruct<T>(GeneratedCodec<T> g) where T : struct
    {
        GeneratedStruct<T>.Codec = g;
        TypeCodec vector = RuntimeHelpers.IsReferenceOrContainsReferences<T>()
            ? new StructArrayCodec<T>(typeof(T[]), StructShape<T>.Generated)
            : new BlockArrayCodec<T>(typeof(T[]));
        AddGenerated(new StructCodec<T>(StructShape<T>.Generated), vector, g.FullName, g.AssemblyName);
    }

    internal static void AddEnum<T>(string fullName, string assemblyName) where T : struct, Enum =>
        AddGenerated(new ScalarCodec<T>(), new BlockArrayCodec<T>(typeof(T[])), fullName, assemblyName);

    /// <summary>Registers the codec of List&lt;T&gt;, HashSet&lt;T&gt; or Dictionary&lt;TKey,TValue&gt; (and of its vector), which a field of a generated codec names.</summary>
    internal static void AddCollection<TCollection>(TypeCodec codec, byte kind, Type first, Type? second) where TCollection : class
    {
        codec.Vector = new ReferenceArrayCodec<TCollection>(typeof(TCollection[]));
        s_generated[codec.Type] = codec;
        s_generated[codec.Vector.Type] = codec.Vector;
        s_collections[(kind, first, second)] = codec.Type;
    }

    /// <summary>The registered list, set or dictionary type with these element types, or null.</summary>
    internal static Type? FindCollection(byte kind, Type first, Type? second) =>
        s_collections.TryGetValue((kind, first, second), out Type? t) ? t : null;

    private static void AddGenerated(TypeCodec codec, TypeCodec vector, string fullName, string assemblyName)
    {
        codec.Vector = vector;
        s_generated[codec.Type] = codec;
        s_generated[vector.Type] = vector;
        s_byName[(fullName, assemblyName)] = codec.Type;
        s_names[codec.Type] = NameBytes(fullName, assemblyName);
    }

    /// <summary>The layout hash of a generated codec, as CodecEmitter.LayoutHash computes it from the type's fields.</summary>
    internal static ulong GeneratedLayoutHash<T>(GeneratedCodec<T> g, int wireBytes)
    {
        var hash = new TransportLayoutHash();
        string name = g.FullName;
        hash.Add(name[(name.AsSpan().LastIndexOfAny('.', '+') + 1)..]);
        hash.Add(wireBytes);
        g.AddLayout(ref hash);
        return hash.Value;
    }

    /// <summary>
    /// The built-in or generated codec of <paramref name="t"/>, or null.  Under the JIT an assembly
    /// may be loaded without having run its module initializer yet (a receiver names its types
    /// before any of its code ran): that is run once, and the lookup repeated.
    /// </summary>
    internal static TypeCodec? Find(Type t, bool generated)
    {
        if (s_builtin.TryGetValue(t, out TypeCodec? c))
            return c;
        if (!generated)
            return null;
        if (s_generated.TryGetValue(t, out c))
            return c;
        Type owner = t;
        while (owner.HasElementType)
            owner = owner.GetElementType()!;
        if (RuntimeFeature.IsDynamicCodeSupported && s_initialized.TryAdd(owner.Module, true))
        {
            RuntimeHelpers.RunModuleConstructor(owner.Module.ModuleHandle);
            if (s_generated.TryGetValue(t, out c))
                return c;
        }
        return null;
    }

    /// <summary>The type a payload names, when a generated codec registered it.</summary>
    internal static Type? Named(string name, string assembly) =>
        s_byName.TryGetValue((name, assembly), out Type? t) ? t : null;

    /// <summary>The name entry of a registered type (i32 length, UTF-8 full name, i32 length, UTF-8 assembly name), or null.</summary>
    internal static byte[]? NameOf(Type t) => s_names.TryGetValue(t, out byte[]? b) ? b : null;

    internal static byte[] NameBytes(string fullName, string assemblyName)
    {
        byte[] name = Encoding.UTF8.GetBytes(fullName);
        byte[] assembly = Encoding.UTF8.GetBytes(assemblyName);
        var bytes = new byte[8 + name.Length + assembly.Length];
        BitConverter.TryWriteBytes(bytes, name.Length);
        name.CopyTo(bytes, 4);
        BitConverter.TryWriteBytes(bytes.AsSpan(4 + name.Length), assembly.Length);
        assembly.CopyTo(bytes, 8 + name.Length);
        return bytes;
    }
}

/// <summary>The generated codec of the struct <typeparamref name="T"/>, once registered.</summary>
internal static class GeneratedStruct<T> where T : struct
{
    internal static GeneratedCodec<T>? Codec;
}

/// <summary>A [Transportable] class through its generated codec: a fixed-size body, created with no constructor run.</summary>
internal sealed unsafe class GeneratedClassCodec<T> : TypeCodec where T : class
{
    private readonly GeneratedCodec<T> _codec;
    private readonly int _bodyBytes;
    private readonly bool _hasReferences;

    public GeneratedClassCodec(GeneratedCodec<T> codec) : base(typeof(T))
    {
        _codec = codec;
        _bodyBytes = codec.BodyBytes;
        _hasReferences = codec.HasReferences;
        LayoutHash = CodecRegistry.GeneratedLayoutHash(codec, _bodyBytes);
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal override void Write(ObjectWriter writer, object obj)
    {
        T value = Unsafe.As<T>(obj); // the codec of exactly this type: the writer looked it up by the object's type
        _codec.Encode(new ObjectEncoder(writer), ref value, ref *writer.Reserve(_bodyBytes));
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal override object Create(ObjectReader reader)
    {
        byte* body = reader.Take(_bodyBytes);
        T obj = _codec.CreateUninitialized();
        if (_hasReferences)
            reader.Defer(obj, this, body);
        else
            _codec.Decode(new ObjectDecoder(reader), ref obj, ref *body);
        return obj;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal override void Fill(ObjectReader reader, object obj, byte* body)
    {
        T value = Unsafe.As<T>(obj);
        _codec.Decode(new ObjectDecoder(reader), ref value, ref *body);
    }
}
