using System.Collections.Generic;
using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace System.MP.Transport;

/// <summary>A codec that can write part of a vector as if it were the whole array (OSend of a slice, scatter blocks).</summary>
internal interface ISliceWriter
{
    void WriteSlice(ObjectWriter writer, Array array, int offset, int count);
}

/// <summary>
/// Encodes object graphs into a <see cref="NativeBuffer"/>.  Objects get ids
/// in the order they are first reached; a reference-identity map
/// (<see cref="IdentityMap"/>) finds the ones already seen, and the list of objects is itself the work queue, so the
/// traversal is breadth-first without recursion: a list of any length cannot
/// overflow the stack.  One writer per thread, reused across calls.
/// </summary>
[RequiresDynamicCode(Codecs.DynamicCodeMessage)]
[RequiresUnreferencedCode(Codecs.DynamicCodeMessage)]
internal sealed unsafe class ObjectWriter
{
    private const int SmallGraph = 1024;

    [ThreadStatic]
    private static ObjectWriter? t_cached;

    private static readonly ConcurrentDictionary<Type, byte[]> s_names = new();

    private NativeBuffer _buffer = null!;
    private long _pos;
    private IdentityMap _ids = new();
    private List<object> _objects = [];
    private readonly Dictionary<Type, int> _typeIndex = [];
    private List<TypeCodec> _codecs = [];
    private List<Type> _types = [];
    private byte[] _table = new byte[256];
    private int _tableLength;
    // The type table is built in groups, one per type the objects reach first (its element and
    // argument entries, then its own).  The previous graph's groups are replayed while this
    // graph reaches the same types in the same order: same prefix, same table, no lookups.
    private List<(Type Type, int Entries, int TableEnd)> _groups = [], _lastGroups = [];
    private List<TypeCodec> _lastCodecs = [];
    private List<Type> _lastTypes = [];
    private byte[] _lastTable = new byte[256];
    private int _replayed;
    private bool _indexed; // _typeIndex holds _types; while a short table is replayed, a scan of _types stands in
    private const int ScannedTypes = 8;
    private int _gap = 128;

    /// <summary>A writer appending to <paramref name="buffer"/> at <paramref name="position"/>.</summary>
    internal static ObjectWriter Rent(NativeBuffer buffer, long position)
    {
        ObjectWriter w = t_cached ?? new ObjectWriter();
        t_cached = null;
        w._buffer = buffer;
        w._pos = position;
        return w;
    }

    internal void Return()
    {
        _buffer = null!;
        t_cached = this;
    }

    internal long Position => _pos;

    /// <summary>Advances by <paramref name="bytes"/> and returns where they start (valid until the next Reserve).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal byte* Reserve(long bytes)
    {
        long end = _pos + bytes;
        if (end > _buffer.Capacity)
            _buffer.EnsureCapacity(end);
        byte* p = _buffer.Pointer + _pos;
        _pos = end;
        return p;
    }

    /// <summary>The id of <paramref name="obj"/> (0 for null), queueing it when first seen.  Called by generated code.</summary>
    internal int Ref(object? obj)
    {
        if (obj is null)
            return 0;
        ref int id = ref _ids.GetOrAdd(obj, out bool seen);
        if (!seen)
        {
            _objects.Add(obj);
            id = _objects.Count;
        }
        return id;
    }

    /// <summary>
    /// Appends one independently decodable payload for <paramref name="root"/>,
    /// or for elements [offset, offset + count) of the vector <paramref name="slice"/>.
    /// </summary>
    /// <returns>Where the payload starts; it ends at <see cref="Position"/>.</returns>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // a loop over every object: no tier-0 pass
    internal long WritePiece(object? root, Array? slice = null, int offset = 0, int count = 0)
    {
        long gapStart = _pos;
        int gap = _gap;
        Reserve(gap);
        long objectsStart = _pos;
        try
        {
            if (slice is not null)
                _objects.Add(slice); // the slice is not the array: other references to the array carry all of it
            else
                Ref(root);
            // The last two types seen: graphs mostly alternate between a few (a node, its array).
            Type? lastType = null, otherType = null;
            int index = 0, otherIndex = 0;
            for (int i = 0; i < _objects.Count; i++)
            {
                object obj = _objects[i];
                Type t = obj.GetType();
                if (t != lastType)
                {
                    (otherType, otherIndex, lastType) = (lastType, index, t);
                    index = t == otherType ? otherIndex : GroupIndex(t);
                }
                TypeCodec codec = _codecs[index];
                *(int*)Reserve(4) = index;
                if (i == 0 && slice is not null)
                    ((ISliceWriter)codec).WriteSlice(this, slice, offset, count);
                else
                    codec.Write(this, obj);
            }
            return WriteHeader(gapStart, gap, objectsStart);
        }
        finally
        {
            Reset();
        }
    }

    /// <summary>Puts header and type table in front of the objects: in the gap when they fit, else after moving the objects.</summary>
    private long WriteHeader(long gapStart, int gap, long objectsStart)
    {
        int tableBytes = 4 + _tableLength;
        int headerBytes = WireFormat.HeaderBytes + tableBytes + 4;
        long start = objectsStart - headerBytes;
        if (headerBytes > gap)
        {
            long objectBytes = _pos - objectsStart;
            Reserve(headerBytes - gap);
            byte* b = _buffer.Pointer;
            Buffer.MemoryCopy(b + objectsStart, b + gapStart + headerBytes, objectBytes, objectBytes);
            start = gapStart;
            _gap = Math.Min(headerBytes, 1 << 16);
        }
        byte* h = _buffer.Pointer + start;
        *(uint*)h = WireFormat.Magic;
        *(uint*)(h + WireFormat.OffsetFlags) = WireFormat.VersionBits;
        *(long*)(h + WireFormat.OffsetTotal) = _pos - start;
        *(int*)(h + WireFormat.OffsetTableBytes) = tableBytes;
        *(int*)(h + WireFormat.OffsetContinuationTag) = 0;
        *(int*)(h + WireFormat.HeaderBytes) = _codecs.Count;
        Marshal.Copy(_table, 0, (nint)(h + WireFormat.HeaderBytes + 4), _tableLength);
        *(int*)(h + WireFormat.HeaderBytes + tableBytes) = _objects.Count;
        return start;
    }

    /// <summary>
    /// Forgets the graph (the writer keeps no reference to user objects).  The
    /// map and list keep their capacity for the next graph of similar size, so
    /// repeated large sends do not regrow them; after a much smaller graph
    /// they are replaced, so one huge send does not make every later Clear slow.
    /// </summary>
    private void Reset()
    {
        int used = _objects.Count;
        _objects.Clear();
        if (_ids.Capacity > 4 * Math.Max(used, SmallGraph))
        {
            _ids = new IdentityMap();
            _objects = [];
        }
        else
        {
            _ids.Clear();
        }
        if (_indexed)
            _typeIndex.Clear();
        _indexed = false;
        (_lastCodecs, _codecs) = (_codecs, _lastCodecs);
        (_lastTypes, _types) = (_types, _lastTypes);
        (_lastGroups, _groups) = (_groups, _lastGroups);
        (_lastTable, _table) = (_table, _lastTable);
        _codecs.Clear();
        _types.Clear();
        _groups.Clear();
        _replayed = 0;
        _tableLength = 0;
    }

    /// <summary>The type-table entry of a type an object has, replaying the previous graph's table while it matches.</summary>
    private int GroupIndex(Type t)
    {
        if (_indexed)
        {
            if (_typeIndex.TryGetValue(t, out int index))
                return index;
        }
        else
        {
            for (int k = 0; k < _types.Count; k++)
                if (_types[k] == t)
                    return k;
        }
        int first = _codecs.Count;
        if (_replayed == _groups.Count && _replayed < _lastGroups.Count && _lastGroups[_replayed].Type == t &&
            _lastGroups[_replayed].Entries + first <= ScannedTypes && !_indexed)
        {
            var (_, entries, tableEnd) = _lastGroups[_replayed++];
            for (int k = first; k < first + entries; k++)
            {
                _codecs.Add(_lastCodecs[k]);
                _types.Add(_lastTypes[k]);
            }
            int from = _tableLength;
            _lastTable.AsSpan(from, tableEnd - from).CopyTo(Grow(tableEnd - from));
        }
        else
        {
            if (!_indexed)
            {
                for (int k = 0; k < _types.Count; k++)
                    _typeIndex.Add(_types[k], k);
                _indexed = true;
            }
            TypeIndex(t);
        }
        _groups.Add((t, _codecs.Count - first, _tableLength));
        return _codecs.Count - 1;
    }

    /// <summary>The type-table entry of <paramref name="t"/>, adding it (after its element or argument types) when new.</summary>
    private int TypeIndex(Type t)
    {
        if (_typeIndex.TryGetValue(t, out int index))
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
            int element = TypeIndex(t.GetElementType()!);
            Append(t.IsSZArray ? WireFormat.EntryVector : WireFormat.EntryMdArray);
            Append(element);
            if (!t.IsSZArray)
                Append((byte)t.GetArrayRank());
        }
        else
        {
            Type[] args = t.IsGenericType ? t.GetGenericArguments() : [];
            Span<int> argIndex = stackalloc int[args.Length];
            for (int i = 0; i < args.Length; i++)
                argIndex[i] = TypeIndex(args[i]);
            Append(WireFormat.EntryNamed);
            Append(s_names.GetOrAdd(t.IsGenericType ? t.GetGenericTypeDefinition() : t, NameBytes));
            Append(codec.LayoutHash);
            Append((byte)args.Length);
            foreach (int a in argIndex)
                Append(a);
        }
        index = _codecs.Count;
        _codecs.Add(codec);
        _types.Add(t);
        _typeIndex.Add(t, index);
        return index;
    }

    /// <summary>i32 length, UTF-8 full name, i32 length, UTF-8 assembly simple name.</summary>
    private static byte[] NameBytes(Type t)
    {
        byte[] name = Encoding.UTF8.GetBytes(t.FullName!);
        byte[] assembly = Encoding.UTF8.GetBytes(t.Assembly.GetName().Name!);
        var bytes = new byte[8 + name.Length + assembly.Length];
        BitConverter.TryWriteBytes(bytes, name.Length);
        name.CopyTo(bytes, 4);
        BitConverter.TryWriteBytes(bytes.AsSpan(4 + name.Length), assembly.Length);
        assembly.CopyTo(bytes, 8 + name.Length);
        return bytes;
    }

    private Span<byte> Grow(int bytes)
    {
        if (_tableLength + bytes > _table.Length)
            Array.Resize(ref _table, Math.Max(_table.Length * 2, _tableLength + bytes));
        Span<byte> s = _table.AsSpan(_tableLength, bytes);
        _tableLength += bytes;
        return s;
    }

    private void Append(byte b) => Grow(1)[0] = b;

    private void Append(int v) => BitConverter.TryWriteBytes(Grow(4), v);

    private void Append(ulong v) => BitConverter.TryWriteBytes(Grow(8), v);

    private void Append(byte[] bytes) => bytes.CopyTo(Grow(bytes.Length));
}
