using System.Buffers;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP.Transport;

/// <summary>
/// List&lt;T&gt;, HashSet&lt;T&gt; and Dictionary&lt;TKey,TValue&gt;: an object of the payload like an
/// array (its own id, so shared references and cycles through it arrive as they left), whose
/// body is an i32 count and then its elements as a run, exactly as a T[] writes its elements
/// (<see cref="ArrayCodec{T}"/>: a block for elements without references, one id per reference,
/// struct bodies).  A dictionary writes all its keys as one run, then all its values as another,
/// in its enumeration order; the receiver adds them in that order.
/// </summary>
/// <remarks>
/// The element codecs are found on first use, so that a codec registered before the element
/// type's assembly registered its own still finds them; the writer's type table has refused an
/// element type that may not travel before any body is written.
/// </remarks>
internal static class CollectionCodecs
{
    /// <summary>The type-table entry kind of a list, set or dictionary type, or 0 for any other type.</summary>
    internal static byte EntryKindOf(Type t)
    {
        if (!t.IsGenericType || t.IsGenericTypeDefinition)
            return 0;
        Type d = t.GetGenericTypeDefinition();
        return d == typeof(List<>) ? WireFormat.EntryList
             : d == typeof(HashSet<>) ? WireFormat.EntryHashSet
             : d == typeof(Dictionary<,>) ? WireFormat.EntryDictionary
             : (byte)0;
    }

    /// <summary>The generic definition of an entry kind <see cref="EntryKindOf"/> returns.</summary>
    internal static Type DefinitionOf(byte kind) => kind switch
    {
        WireFormat.EntryList => typeof(List<>),
        WireFormat.EntryHashSet => typeof(HashSet<>),
        _ => typeof(Dictionary<,>),
    };

    /// <summary>The element codec of <typeparamref name="T"/>: the codec of T[], which writes a run of them.</summary>
    internal static ArrayCodec<T> ElementsOf<T>() => (ArrayCodec<T>)Codecs.VectorOf(typeof(T), Codecs.For(typeof(T)));

    /// <summary>
    /// Refuses a set or dictionary whose comparer the receiver would not rebuild: it uses the
    /// default comparer, so only that one travels (for string also StringComparer.Ordinal, which
    /// compares the same way).
    /// </summary>
    internal static void CheckComparer<T>(Type collection, IEqualityComparer<T> comparer)
    {
        if (ReferenceEquals(comparer, EqualityComparer<T>.Default) ||
            (typeof(T) == typeof(string) && ReferenceEquals(comparer, StringComparer.Ordinal)))
            return;
        throw new TransportException(SR.Format(SR.CollectionComparer, TransportErrors.Name(collection), comparer.GetType().FullName));
    }

    /// <summary>A scratch array of at least <paramref name="count"/> elements.</summary>
    internal static T[] Rent<T>(int count) => count == 0 ? [] : ArrayPool<T>.Shared.Rent(count);

    internal static void Return<T>(T[] array, int count)
    {
        if (array.Length == 0)
            return;
        if (RuntimeHelpers.IsReferenceOrContainsReferences<T>())
            Array.Clear(array, 0, count); // the pool keeps no user objects alive
        ArrayPool<T>.Shared.Return(array);
    }

    /// <summary>Reads a collection's count (checked against the bytes left) and takes its runs of <paramref name="elementBytes"/> per element.</summary>
    internal static unsafe byte* TakeRuns(ObjectReader reader, long elementBytes, out int count)
    {
        count = reader.ReadCount(elementBytes);
        return reader.Take(count * elementBytes);
    }

    /// <summary>The count of a collection whose body (its runs) starts at <paramref name="runs"/>: the i32 just before them.</summary>
    internal static unsafe int CountBefore(byte* runs) => Unsafe.ReadUnaligned<int>(runs - 4);
}

/// <summary>A List&lt;T&gt;: its count, then its elements as a run.</summary>
internal sealed unsafe class ListCodec<T> : TypeCodec
{
    private ArrayCodec<T>? _elements;

    public ListCodec() : base(typeof(List<T>))
    {
    }

    private ArrayCodec<T> Elements => _elements ??= CollectionCodecs.ElementsOf<T>();

    internal override void Write(ObjectWriter writer, object obj)
    {
        Span<T> items = CollectionsMarshal.AsSpan(Unsafe.As<List<T>>(obj)); // the codec of exactly this type
        *(int*)writer.Reserve(4) = items.Length;
        Elements.WriteRun(writer, items);
    }

    internal override object Create(ObjectReader reader)
    {
        ArrayCodec<T> elements = Elements;
        byte* runs = CollectionCodecs.TakeRuns(reader, elements.RunElementBytes, out int count);
        var list = new List<T>(count);
        CollectionsMarshal.SetCount(list, count);
        if (elements.RunHasReferences)
            reader.Defer(list, this, runs);
        else
            elements.ReadRun(reader, CollectionsMarshal.AsSpan(list), runs);
        return list;
    }

    internal override void Fill(ObjectReader reader, object obj, byte* body) =>
        Elements.ReadRun(reader, CollectionsMarshal.AsSpan((List<T>)obj), body);
}

/// <summary>
/// A HashSet&lt;T&gt;: its count, then its elements as a run.  The receiver's set has the default
/// comparer; one with another comparer is refused when sent.  Elements with references are added
/// after every other object of the payload is filled (<see cref="ObjectReader.DeferHashed"/>), so
/// that hash codes computed from their fields see them filled.
/// </summary>
internal sealed unsafe class HashSetCodec<T> : TypeCodec
{
    private ArrayCodec<T>? _elements;

    public HashSetCodec() : base(typeof(HashSet<T>))
    {
    }

    private ArrayCodec<T> Elements => _elements ??= CollectionCodecs.ElementsOf<T>();

    internal override void Write(ObjectWriter writer, object obj)
    {
        var set = Unsafe.As<HashSet<T>>(obj);
        CollectionCodecs.CheckComparer(Type, set.Comparer);
        int count = set.Count;
        T[] items = CollectionCodecs.Rent<T>(count);
        try
        {
            set.CopyTo(items);
            *(int*)writer.Reserve(4) = count;
            Elements.WriteRun(writer, items.AsSpan(0, count));
        }
        finally
        {
            CollectionCodecs.Return(items, count);
        }
    }

    internal override object Create(ObjectReader reader)
    {
        ArrayCodec<T> elements = Elements;
        byte* runs = CollectionCodecs.TakeRuns(reader, elements.RunElementBytes, out int count);
        var set = new HashSet<T>(count);
        if (elements.RunHasReferences)
            reader.DeferHashed(set, this, runs);
        else
            Fill(reader, set, runs);
        return set;
    }

    internal override void Fill(ObjectReader reader, object obj, byte* body)
    {
        var set = (HashSet<T>)obj;
        int count = CollectionCodecs.CountBefore(body);
        T[] items = CollectionCodecs.Rent<T>(count);
        try
        {
            Elements.ReadRun(reader, items.AsSpan(0, count), body);
            for (int i = 0; i < count; i++)
                if (!set.Add(items[i]))
                    throw TransportErrors.Malformed(SR.Format(SR.PayloadSetDuplicate, TransportErrors.Name(Type), i));
        }
        finally
        {
            CollectionCodecs.Return(items, count);
        }
    }
}

/// <summary>
/// A Dictionary&lt;TKey,TValue&gt;: its count, then its keys as a run, then its values as a run
/// (each pair at the same index).  The receiver's dictionary has the default comparer; one with
/// another comparer is refused when sent.  Keys or values with references are added after every
/// other object of the payload is filled (<see cref="ObjectReader.DeferHashed"/>).
/// </summary>
internal sealed unsafe class DictionaryCodec<TKey, TValue> : TypeCodec where TKey : notnull
{
    private ArrayCodec<TKey>? _keys;
    private ArrayCodec<TValue>? _values;

    public DictionaryCodec() : base(typeof(Dictionary<TKey, TValue>))
    {
    }

    private ArrayCodec<TKey> Keys => _keys ??= CollectionCodecs.ElementsOf<TKey>();

    private ArrayCodec<TValue> Values => _values ??= CollectionCodecs.ElementsOf<TValue>();

    internal override void Write(ObjectWriter writer, object obj)
    {
        var map = Unsafe.As<Dictionary<TKey, TValue>>(obj);
        CollectionCodecs.CheckComparer(Type, map.Comparer);
        int count = map.Count;
        TKey[] keys = CollectionCodecs.Rent<TKey>(count);
        TValue[] values = CollectionCodecs.Rent<TValue>(count);
        try
        {
            map.Keys.CopyTo(keys, 0);
            map.Values.CopyTo(values, 0); // the same order as the keys: both walk the entries
            *(int*)writer.Reserve(4) = count;
            Keys.WriteRun(writer, keys.AsSpan(0, count));
            Values.WriteRun(writer, values.AsSpan(0, count));
        }
        finally
        {
            CollectionCodecs.Return(keys, count);
            CollectionCodecs.Return(values, count);
        }
    }

    internal override object Create(ObjectReader reader)
    {
        ArrayCodec<TKey> keys = Keys;
        ArrayCodec<TValue> values = Values;
        byte* runs = CollectionCodecs.TakeRuns(reader, keys.RunElementBytes + values.RunElementBytes, out int count);
        var map = new Dictionary<TKey, TValue>(count);
        if (keys.RunHasReferences || values.RunHasReferences)
            reader.DeferHashed(map, this, runs);
        else
            Fill(reader, map, runs);
        return map;
    }

    internal override void Fill(ObjectReader reader, object obj, byte* body)
    {
        var map = (Dictionary<TKey, TValue>)obj;
        int count = CollectionCodecs.CountBefore(body);
        TKey[] keys = CollectionCodecs.Rent<TKey>(count);
        TValue[] values = CollectionCodecs.Rent<TValue>(count);
        try
        {
            Keys.ReadRun(reader, keys.AsSpan(0, count), body);
            Values.ReadRun(reader, values.AsSpan(0, count), body + count * Keys.RunElementBytes);
            for (int i = 0; i < count; i++)
            {
                if (keys[i] is null)
                    throw TransportErrors.Malformed(SR.Format(SR.PayloadNullKey, TransportErrors.Name(Type), i));
                if (!map.TryAdd(keys[i], values[i]))
                    throw TransportErrors.Malformed(SR.Format(SR.PayloadSetDuplicate, TransportErrors.Name(Type), i));
            }
        }
        finally
        {
            CollectionCodecs.Return(keys, count);
            CollectionCodecs.Return(values, count);
        }
    }
}
