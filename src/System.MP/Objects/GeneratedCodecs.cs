using System.Collections.Generic;
using System.ComponentModel;
using System.Globalization;
using System.MP.Transport;

namespace System.MP.CompilerServices;

/// <summary>
/// Registers the codecs the System.MP source generator writes for a project's [Transportable]
/// types (its module initializer calls this); object operations then use them instead of
/// generating code at run time.  Not meant to be called by hand.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public static class GeneratedCodecs
{
    /// <summary>Registers the codec of the [Transportable] class <typeparamref name="T"/> (and of <typeparamref name="T"/>[]).</summary>
    /// <param name="codec">The generated codec.</param>
    public static void RegisterClass<T>(GeneratedCodec<T> codec) where T : class => CodecRegistry.AddClass(codec);

    /// <summary>Registers the codec of the [Transportable] struct <typeparamref name="T"/> (boxed, and of <typeparamref name="T"/>[]).</summary>
    /// <param name="codec">The generated codec.</param>
    public static void RegisterStruct<T>(GeneratedCodec<T> codec) where T : struct => CodecRegistry.AddStruct(codec);

    /// <summary>Registers List&lt;<typeparamref name="T"/>&gt; (and its vector), which a [Transportable] type's field names, so that it travels without code built at run time.</summary>
    /// <typeparam name="T">The element type.</typeparam>
    public static void RegisterList<T>() =>
        CodecRegistry.AddCollection<List<T>>(new ListCodec<T>(), WireFormat.EntryList, typeof(T), null);

    /// <summary>Registers HashSet&lt;<typeparamref name="T"/>&gt; (and its vector), which a [Transportable] type's field names.</summary>
    /// <typeparam name="T">The element type.</typeparam>
    public static void RegisterHashSet<T>() =>
        CodecRegistry.AddCollection<HashSet<T>>(new HashSetCodec<T>(), WireFormat.EntryHashSet, typeof(T), null);

    /// <summary>Registers Dictionary&lt;<typeparamref name="TKey"/>, <typeparamref name="TValue"/>&gt; (and its vector), which a [Transportable] type's field names.</summary>
    /// <typeparam name="TKey">The key type.</typeparam>
    /// <typeparam name="TValue">The value type.</typeparam>
    public static void RegisterDictionary<TKey, TValue>() where TKey : notnull =>
        CodecRegistry.AddCollection<Dictionary<TKey, TValue>>(new DictionaryCodec<TKey, TValue>(), WireFormat.EntryDictionary, typeof(TKey), typeof(TValue));

    /// <summary>Registers the enum <typeparamref name="T"/>, which a [Transportable] type's field has, so that it travels boxed and in arrays.</summary>
    /// <param name="fullName">The enum's full name (Type.FullName).</param>
    /// <param name="assemblyName">The simple name of the assembly that defines it.</param>
    public static void RegisterEnum<T>(string fullName, string assemblyName) where T : struct, Enum =>
        CodecRegistry.AddEnum<T>(fullName, assemblyName);
}

/// <summary>
/// The codec of one [Transportable] type, written by the System.MP source generator: the type's
/// fields flattened into a fixed-size body (value fields packed, followed references as object
/// ids), byte for byte what the run-time path writes.
/// </summary>
/// <typeparam name="T">The class or struct.</typeparam>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class GeneratedCodec<T>
{
    /// <summary>A codec of the type named <paramref name="fullName"/> in the assembly <paramref name="assemblyName"/>.</summary>
    /// <param name="fullName">The type's full name (Type.FullName), which payloads carry.</param>
    /// <param name="assemblyName">The simple name of the assembly that defines the type.</param>
    protected GeneratedCodec(string fullName, string assemblyName)
    {
        FullName = fullName;
        AssemblyName = assemblyName;
    }

    /// <summary>The type's full name (Type.FullName).</summary>
    public string FullName { get; }

    /// <summary>The simple name of the assembly that defines the type.</summary>
    public string AssemblyName { get; }

    /// <summary>Bytes of the body: the flattened fields.</summary>
    public abstract int BodyBytes { get; }

    /// <summary>Whether the body holds followed references (decoded once every object of the payload exists).</summary>
    public abstract bool HasReferences { get; }

    /// <summary>A new instance of a class, with no constructor run (the receiver runs no code of the type).</summary>
    /// <returns>The uninitialized instance.</returns>
    public virtual T CreateUninitialized() => throw new NotSupportedException(
        string.Format(CultureInfo.InvariantCulture, "{0} is a struct or an abstract class: it is never created from a payload by itself.", FullName));

    /// <summary>Adds the flattened fields to the layout hash (each field's path, type name, kind and size).</summary>
    /// <param name="hash">The hash, which already holds the type's name and body size.</param>
    public abstract void AddLayout(ref TransportLayoutHash hash);

    /// <summary>Writes the fields of <paramref name="value"/> into its body.</summary>
    /// <param name="encoder">Gives followed references their object ids.</param>
    /// <param name="value">The instance.</param>
    /// <param name="body">The first byte of the body (<see cref="BodyBytes"/> bytes).</param>
    public abstract void Encode(ObjectEncoder encoder, ref T value, ref byte body);

    /// <summary>Fills the fields of <paramref name="value"/> from its body.</summary>
    /// <param name="decoder">Turns object ids into the payload's objects, checked to be of the field's type.</param>
    /// <param name="value">The instance.</param>
    /// <param name="body">The first byte of the body.</param>
    public abstract void Decode(ObjectDecoder decoder, ref T value, ref byte body);
}

/// <summary>Gives the references a generated codec writes their object ids.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public readonly struct ObjectEncoder
{
    private readonly ObjectWriter _writer;

    internal ObjectEncoder(ObjectWriter writer) => _writer = writer;

    /// <summary>The object id of <paramref name="value"/> in the payload (0 for null), queueing it when first reached.</summary>
    /// <param name="value">The referenced object.</param>
    /// <returns>Its id.</returns>
    public int Reference(object? value) => _writer.Ref(value);
}

/// <summary>Gives a generated codec the objects its references name.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public readonly struct ObjectDecoder
{
    private readonly ObjectReader _reader;

    internal ObjectDecoder(ObjectReader reader) => _reader = reader;

    /// <summary>The object with id <paramref name="id"/> (null for 0), checked to be a <typeparamref name="TField"/>.</summary>
    /// <typeparam name="TField">The field's type.</typeparam>
    /// <param name="id">The id from the body.</param>
    /// <returns>The object.</returns>
    /// <exception cref="TransportException">No such object, or it is not a <typeparamref name="TField"/>.</exception>
    public TField? Reference<TField>(int id) where TField : class => _reader.Ref<TField>(id);
}

/// <summary>The layout hash a payload carries with each named type (FNV-1a over the names, kinds and sizes of its flattened fields).</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public struct TransportLayoutHash
{
    private ulong _value;

    /// <summary>An empty hash.</summary>
    public TransportLayoutHash() => _value = 14695981039346656037UL;

    /// <summary>The hash so far.</summary>
    public readonly ulong Value => _value;

    /// <summary>Mixes in <paramref name="text"/> and a separator.</summary>
    /// <param name="text">A name.</param>
    public void Add(string text) => Add(text.AsSpan());

    /// <summary>
    /// Mixes in <paramref name="number"/> as its invariant decimal text (an optional '-', then
    /// the digits), written here rather than formatted: no culture data is loaded for it, so
    /// registering codecs at start needs no globalization library.
    /// </summary>
    /// <param name="number">A size or kind.</param>
    public void Add(int number)
    {
        Span<char> text = stackalloc char[11]; // "-2147483648"
        int i = text.Length;
        long n = Math.Abs((long)number);
        do
        {
            text[--i] = (char)('0' + (int)(n % 10));
            n /= 10;
        }
        while (n != 0);
        if (number < 0)
            text[--i] = '-';
        Add(text[i..]);
    }

    private void Add(ReadOnlySpan<char> text)
    {
        ulong h = _value;
        foreach (char c in text)
            h = (h ^ c) * 1099511628211UL;
        _value = (h ^ '|') * 1099511628211UL;
    }
}
