using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Text;

namespace System.MP.Transport;

/// <summary>
/// The type table of the payload an <see cref="ObjectWriter"/> is writing (WireFormat: entries,
/// each referring only to earlier ones), and the codec of each entry.
/// </summary>
/// <remarks>
/// The table is built in groups, one per type the objects reach first: that type's element and
/// argument entries, then its own.  Consecutive graphs mostly reach the same types in the same
/// order (a ping-pong, a loop of sends), so the previous graph's table is kept, and while this
/// graph reaches the same group roots in the same order it replays them: this graph's table is
/// then a prefix of the previous one, and reaching a type costs one comparison, with nothing
/// copied.  At the first difference the prefix is copied into a table built from there on,
/// which becomes the one to replay next.
/// </remarks>
internal sealed class WriterTypeTable
{
    // Up to this many entries a type is found by scanning them; beyond, by a dictionary.
    private const int ScannedTypes = 8;

    private static readonly ConcurrentDictionary<Type, byte[]> s_names = new();

    /// <summary>One table: entries, codecs, wire bytes, and the groups that made it.</summary>
    private sealed class Table
    {
        internal Type[] Types = new Type[16];
        internal TypeCodec[] Codecs = new TypeCodec[16];
        internal int Count;
        internal byte[] Bytes = new byte[256];
        internal int Length;
        internal Group[] Groups = new Group[8];
        internal int GroupCount;
        internal Dictionary<Type, int>? Index; // all entries, once there are more than ScannedTypes

        /// <summary>The entry of <paramref name="t"/> among the first <paramref name="count"/>, or -1.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal int Find(Type t, int count)
        {
            if (count <= ScannedTypes)
            {
                Type[] types = Types;
                for (int k = 0; k < count; k++)
                    if (ReferenceEquals(types[k], t))
                        return k;
                return -1;
            }
            return Index!.TryGetValue(t, out int index) && index < count ? index : -1;
        }

        internal void Clear()
        {
            Count = 0;
            Length = 0;
            GroupCount = 0;
            Index?.Clear();
        }
    }

    /// <summary>A group: the type that started it, and the entry count and table bytes once it was added.</summary>
    private readonly record struct Group(Type Root, int EntriesEnd, int TableEnd);

    private Table _last = new(), _built = new();
    private int _replayed;  // groups of _last replayed so far (while !_building)
    private int _replayedEntries; // the entries those groups hold
    private bool _building; // this graph's table differs from _last: it is in _built

    /// <summary>The codec of each entry (index = entry), valid until the next <see cref="EntryOf"/>.</summary>
    internal TypeCodec[] EntryCodecs => _building ? _built.Codecs : _last.Codecs;

    /// <summary>Number of entries of this graph's table.</summary>
    internal int Count => _building ? _built.Count : _replayedEntries;

    /// <summary>This graph's table bytes (without the entry count).</summary>
    internal ReadOnlySpan<byte> Bytes =>
        _building ? _built.Bytes.AsSpan(0, _built.Length)
                  : _last.Bytes.AsSpan(0, _replayed == 0 ? 0 : _last.Groups[_replayed - 1].TableEnd);

    /// <summary>The entry of the type an object has, adding it (and the types it names) when this graph has not reached it yet.</summary>
    /// <exception cref="TransportException">The type may not travel.</exception>
    internal int EntryOf(Type t)
    {
        if (!_building)
        {
            Table last = _last;
            int found = last.Find(t, _replayedEntries);
            if (found >= 0)
                return found;
            if (_replayed < last.GroupCount && ReferenceEquals(last.Groups[_replayed].Root, t))
            {
                _replayedEntries = last.Groups[_replayed++].EntriesEnd;
                return _replayedEntries - 1;
            }
            StartBuilding();
        }
        else
        {
            int found = _built.Find(t, _built.Count);
            if (found >= 0)
                return found;
        }
        int index = Add(t);
        Table b = _built;
        if (b.GroupCount == b.Groups.Length)
            Array.Resize(ref b.Groups, b.GroupCount * 2);
        b.Groups[b.GroupCount++] = new Group(t, b.Count, b.Length);
        return index;
    }

    /// <summary>Forgets this graph; its table is the one the next graph replays.</summary>
    internal void Reset()
    {
        if (_building)
        {
            (_last, _built) = (_built, _last);
            _built.Clear();
            _building = false;
        }
        _replayed = 0;
        _replayedEntries = 0;
    }

    /// <summary>This graph differs from the previous one: its replayed prefix becomes the start of a table built from here.</summary>
    private void StartBuilding()
    {
        Table from = _last, to = _built;
        int entries = _replayedEntries, bytes = _replayed == 0 ? 0 : from.Groups[_replayed - 1].TableEnd;
        to.Clear();
        EnsureEntries(to, entries);
        Array.Copy(from.Types, to.Types, entries);
        Array.Copy(from.Codecs, to.Codecs, entries);
        to.Count = entries;
        from.Bytes.AsSpan(0, bytes).CopyTo(Grow(to, bytes));
        if (to.Groups.Length < _replayed)
            Array.Resize(ref to.Groups, from.Groups.Length);
        Array.Copy(from.Groups, to.Groups, _replayed);
        to.GroupCount = _replayed;
        if (entries > ScannedTypes)
        {
            to.Index ??= [];
            for (int k = 0; k < entries; k++)
                to.Index.Add(to.Types[k], k);
        }
        _building = true;
    }

    /// <summary>The entry of <paramref name="t"/> in the table being built, adding it (after its element or argument types) when new.</summary>
    private int Add(Type t)
    {
        Table b = _built;
        int index = b.Find(t, b.Count);
        if (index >= 0)
            return index;
        TypeCodec codec = Codecs.For(t); // refuses a type that may not travel, before anything is sent
        int code = WireFormat.BuiltinCode(t);
        if (code >= 0)
        {
            Append(WireFormat.EntryBuiltin);
            Append((byte)code);
        }
        else if (t.IsArray)
        {
            int element = Add(t.GetElementType()!);
            Append(t.IsSZArray ? WireFormat.EntryVector : WireFormat.EntryMdArray);
            Append(element);
            if (!t.IsSZArray)
                Append((byte)t.GetArrayRank());
        }
        else if (CollectionCodecs.EntryKindOf(t) is byte collection and not 0)
        {
            Type[] args = t.GetGenericArguments();
            int first = Add(args[0]);
            int second = args.Length > 1 ? Add(args[1]) : -1;
            Append(collection);
            Append(first);
            if (second >= 0)
                Append(second);
        }
        else
        {
            Type[] args = t.IsGenericType ? t.GetGenericArguments() : [];
            Span<int> argIndex = stackalloc int[args.Length];
            for (int i = 0; i < args.Length; i++)
                argIndex[i] = Add(args[i]);
            Append(WireFormat.EntryNamed);
            Append(CodecRegistry.NameOf(t) ?? s_names.GetOrAdd(t.IsGenericType ? t.GetGenericTypeDefinition() : t, NameBytes));
            Append(codec.LayoutHash);
            Append((byte)args.Length);
            foreach (int a in argIndex)
                Append(a);
        }
        index = b.Count;
        EnsureEntries(b, index + 1);
        b.Types[index] = t;
        b.Codecs[index] = codec;
        b.Count = index + 1;
        if (b.Count > ScannedTypes)
        {
            if (b.Index is null || b.Index.Count == 0)
            {
                b.Index ??= [];
                for (int k = 0; k < index; k++)
                    b.Index.Add(b.Types[k], k);
            }
            b.Index.Add(t, index);
        }
        return index;
    }

    private static void EnsureEntries(Table b, int count)
    {
        if (count <= b.Types.Length)
            return;
        int size = Math.Max(count, 2 * b.Types.Length);
        Array.Resize(ref b.Types, size);
        Array.Resize(ref b.Codecs, size);
    }

    /// <summary>i32 length, UTF-8 full name, i32 length, UTF-8 assembly simple name.</summary>
    private static byte[] NameBytes(Type t) => CodecRegistry.NameBytes(t.FullName!, t.Assembly.GetName().Name!);

    private static Span<byte> Grow(Table b, int bytes)
    {
        if (b.Length + bytes > b.Bytes.Length)
            Array.Resize(ref b.Bytes, Math.Max(b.Bytes.Length * 2, b.Length + bytes));
        Span<byte> s = b.Bytes.AsSpan(b.Length, bytes);
        b.Length += bytes;
        return s;
    }

    private void Append(byte v) => Grow(_built, 1)[0] = v;

    private void Append(int v) => BitConverter.TryWriteBytes(Grow(_built, 4), v);

    private void Append(ulong v) => BitConverter.TryWriteBytes(Grow(_built, 8), v);

    private void Append(byte[] bytes) => bytes.CopyTo(Grow(_built, bytes.Length));
}
