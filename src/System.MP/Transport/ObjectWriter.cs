using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP.Transport;

/// <summary>A codec that can write part of a vector as if it were the whole array (OSend of a slice, scatter blocks).</summary>
internal interface ISliceWriter
{
    void WriteSlice(ObjectWriter writer, Array array, int offset, int count);
}

/// <summary>
/// Encodes object graphs into a <see cref="NativeBuffer"/>.  Objects get ids
/// in the order they are first reached; the list of objects is itself the work queue, so the
/// traversal is breadth-first without recursion: a list of any length cannot
/// overflow the stack.  The objects already seen are found by comparing references with the
/// list while it holds at most <see cref="ScannedObjects"/> (a small graph: no hashing, and a
/// collection meanwhile changes nothing), then by a reference-identity map
/// (<see cref="IdentityMap"/>).  One writer per thread, reused across calls.
/// </summary>
internal sealed unsafe class ObjectWriter
{
    private const int SmallGraph = 1024;

    // Up to this many objects, Ref finds one already seen by scanning the list; beyond, by the map.
    private const int ScannedObjects = 8;

    [ThreadStatic]
    private static ObjectWriter? t_cached;

    private NativeBuffer _buffer = null!;
    private bool _busy; // rented (Rent to Return)
    private long _pos;
    private IdentityMap _ids = new();
    private ObjectSlot[] _objects = new ObjectSlot[16];
    private int _count;
    private readonly WriterTypeTable _types = new();
    private int _gap = 128;
    private int _scanFrom; // the first object Ref may return: 1 when object 1 is a slice (not its array)
    private bool _mapped; // this graph's objects are in _ids (it grew past ScannedObjects)
    private int _collections; // gen-0 collections when the first address went into _ids

    /// <summary>A writer appending to <paramref name="buffer"/> at <paramref name="position"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static ObjectWriter Rent(NativeBuffer buffer, long position)
    {
        // The thread's writer stays cached while in use (no reference stored per graph); a graph
        // encoded while it is busy (should anything the walk runs encode one) gets a writer of its own.
        ObjectWriter w = t_cached ??= new ObjectWriter();
        if (w._busy)
            w = new ObjectWriter();
        w._busy = true;
        if (!ReferenceEquals(w._buffer, buffer)) // mostly the buffer of the thread's previous graph
            w._buffer = buffer;
        w._pos = position;
        return w;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal void Return() => _busy = false; // the buffer stays referenced (never written again before the next Rent)

    internal long Position => _pos;

    private static long s_encodedAgain;

    /// <summary>Graphs encoded a second time because a collection ran during the first (tests).</summary>
    internal static long EncodedAgain => Interlocked.Read(ref s_encodedAgain);

    /// <summary>
    /// Runs once the root is queued, before the walk, and again once the first objects went into the
    /// identity map (a graph of more than <see cref="ScannedObjects"/> objects): tests, a collection there.
    /// </summary>
    internal static Action? AfterRootForTests;

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
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal int Ref(object? obj)
    {
        if (obj is null)
            return 0;
        if (!_mapped)
        {
            ObjectSlot[] objects = _objects;
            int count = _count;
            for (int k = _scanFrom; k < count; k++)
                if (ReferenceEquals(objects[k].Value, obj))
                    return k + 1;
            if (count < ScannedObjects)
                return Queue(obj);
            StartMap();
        }
        ref int id = ref _ids.GetOrAdd(obj, out bool seen);
        if (!seen)
            id = Queue(obj);
        return id;
    }

    /// <summary>The graph outgrew the scan: the objects queued so far go into the identity map.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void StartMap()
    {
        _mapped = true;
        _collections = GC.CollectionCount(0); // before any address is taken: a later move is seen
        for (int k = _scanFrom; k < _count; k++)
            _ids.GetOrAdd(_objects[k].Value!, out _) = k + 1;
        AfterRootForTests?.Invoke();
    }

    /// <summary>Appends <paramref name="obj"/> to the objects to write; its id.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private int Queue(object obj)
    {
        if (_count == _objects.Length)
            Array.Resize(ref _objects, _count * 2);
        _objects[_count].Value = obj;
        return ++_count;
    }

    /// <summary>
    /// Appends one independently decodable payload for <paramref name="root"/>,
    /// or for elements [offset, offset + count) of the vector <paramref name="slice"/>.
    /// </summary>
    /// <returns>Where the payload starts; it ends at <see cref="Position"/>.</returns>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal long WritePiece(object? root, Array? slice = null, int offset = 0, int count = 0)
    {
        long gapStart = _pos;
        long start = WriteOnce(root, slice, offset, count, out bool moved);
        if (!moved)
            return start;
        // A collection may have moved objects the identity map had hashed by address: again, by identity hash codes.
        Interlocked.Increment(ref s_encodedAgain);
        _pos = gapStart;
        _ids.ByAddress = false;
        try
        {
            return WriteOnce(root, slice, offset, count, out _);
        }
        finally
        {
            _ids.ByAddress = true;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // a loop over every object: no tier-0 pass
    private long WriteOnce(object? root, Array? slice, int offset, int count, out bool moved)
    {
        long gapStart = _pos;
        int gap = _gap;
        Reserve(gap);
        long objectsStart = _pos;
        try
        {
            if (slice is not null)
            {
                Queue(slice); // the slice is not the array: other references to the array carry all of it
                _scanFrom = 1;
            }
            else
                Ref(root);
            AfterRootForTests?.Invoke();
            // The last two types seen: graphs mostly alternate between a few (a node, its array).
            Type? lastType = null, otherType = null;
            TypeCodec? lastCodec = null, otherCodec = null;
            int index = 0, otherIndex = 0;
            for (int i = 0; i < _count; i++)
            {
                object obj = _objects[i].Value!;
                Type t = obj.GetType();
                if (!ReferenceEquals(t, lastType))
                {
                    if (ReferenceEquals(t, otherType))
                    {
                        (otherType, otherIndex, otherCodec, lastType, index, lastCodec) = (lastType, index, lastCodec, t, otherIndex, otherCodec);
                    }
                    else
                    {
                        (otherType, otherIndex, otherCodec, lastType) = (lastType, index, lastCodec, t);
                        index = _types.EntryOf(t);
                        lastCodec = _types.EntryCodecs[index];
                    }
                }
                *(int*)Reserve(4) = index;
                if (i == 0 && slice is not null)
                    ((ISliceWriter)lastCodec!).WriteSlice(this, slice, offset, count);
                else
                    lastCodec!.Write(this, obj);
            }
            // Addresses in the map hold only if no collection ran since the first went in.
            moved = _mapped && _ids.ByAddress && GC.CollectionCount(0) != _collections;
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
        ReadOnlySpan<byte> table = _types.Bytes;
        int tableBytes = 4 + table.Length;
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
        *(int*)(h + WireFormat.HeaderBytes) = _types.Count;
        table.CopyTo(new Span<byte>(h + WireFormat.HeaderBytes + 4, table.Length));
        *(int*)(h + WireFormat.HeaderBytes + tableBytes) = _count;
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
        int used = _count;
        if (_ids.Capacity > 4 * Math.Max(used, SmallGraph))
        {
            _ids = new IdentityMap();
            _objects = new ObjectSlot[16];
        }
        else
        {
            if (_mapped)
                _ids.Clear();
            ObjectSlot.Clear(_objects, used);
        }
        _count = 0;
        _scanFrom = 0;
        _mapped = false;
        _types.Reset();
    }
}
