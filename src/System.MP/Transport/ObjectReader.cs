using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace System.MP.Transport;

/// <summary>
/// Decodes a payload in two flat passes, never recursing: pass 1 walks the
/// objects in order and creates each one (every length checked against the
/// bytes left, so a forged count cannot allocate more than a small multiple
/// of the payload); pass 2 fills the references of the objects that have
/// any, now that every id has its object.  Every reference is checked to be
/// an instance of the field's or element's type.  One reader per thread.
/// </summary>
internal sealed unsafe class ObjectReader
{
    private const int SmallGraph = 1024;

    [ThreadStatic]
    private static ObjectReader? t_cached;

    private struct Deferred
    {
        internal object Obj;
        internal TypeCodec Codec;
        internal byte* Body;
    }

    private sealed class TypeTable
    {
        internal required byte[] Bytes;
        internal required Type[] Types;
        internal required TypeCodec?[] Codecs;
    }

    private byte* _pos;
    private byte* _end;
    private ObjectSlot[] _objects = new ObjectSlot[16];
    private int _count;
    private Deferred[] _deferred = new Deferred[16];
    private int _deferredCount;
    private Deferred[] _hashed = [];
    private int _hashedCount;
    private TypeTable? _lastTable;
    private bool _busy; // decoding (Decode)

    // The buffer this thread's blocking receives take a payload's first message into
    // (PayloadChannel.Receive), kept by the thread's reader between messages: a receive neither
    // rents it from the shared pool nor returns it, an interlocked exchange of a pool slot each.
    // Out of this field while a receive uses it, so a receive nested in a decode (a static
    // constructor that receives) rents one of its own.  At most BufferPool.InitialBytes.  A receive
    // takes it by an exchange of its own field (uncontended), because the gen-2 trim
    // (ReceiveBuffers.Trim, on the finalizer thread) may take it at the same time: whichever
    // exchange gets it holds it, so a buffer in a receive is never the trim's.
    private NativeBuffer? _receiveBuffer;

    // The kept buffer as the last gen-2 trim found it, set aside: a receive takes it back (it was
    // in use), the next trim frees it (unused from one gen-2 collection to the next).
    private NativeBuffer? _idleBuffer;

    // The thread has ended (the trim runs on the finalizer thread too, never beside this).
    ~ObjectReader()
    {
        _receiveBuffer?.Free();
        _idleBuffer?.Free();
    }

    /// <summary>This thread's reader, null before its first decode or receive (tests).</summary>
    internal static ObjectReader? Current => t_cached;

    /// <summary>True while the reader keeps a receive buffer, in use since the last gen-2 trim or set aside by it (tests).</summary>
    internal bool KeepsReceiveBuffer => Volatile.Read(ref _receiveBuffer) is not null || Volatile.Read(ref _idleBuffer) is not null;

    /// <summary>A buffer of at least <see cref="WireFormat.FirstChunkBytes"/> for a blocking receive: the thread's own, else a pooled one.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static NativeBuffer TakeReceiveBuffer()
    {
        ObjectReader? r = t_cached;
        if (r is not null && Interlocked.Exchange(ref r._receiveBuffer, null) is NativeBuffer b)
            return b;
        return TakeIdleOrRent(r);
    }

    /// <summary>The buffer the last gen-2 trim set aside, else a pooled one.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static NativeBuffer TakeIdleOrRent(ObjectReader? r) =>
        (r is null ? null : Interlocked.Exchange(ref r._idleBuffer, null)) ?? BufferPool.Rent(WireFormat.FirstChunkBytes);

    /// <summary>Gives back a buffer from <see cref="TakeReceiveBuffer"/>: the thread keeps it unless it holds one already or it grew.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void KeepReceiveBuffer(NativeBuffer buffer)
    {
        ObjectReader r = t_cached ?? ReceiveBuffers.NewReader();
        if (r._receiveBuffer is null && buffer.Capacity <= BufferPool.InitialBytes)
            r._receiveBuffer = buffer;
        else
            BufferPool.Return(buffer);
    }

    /// <summary>
    /// The receive buffers that the threads' readers keep, given back when the GC reports memory
    /// pressure: at each gen-2 collection a buffer set aside at the previous one and not taken back
    /// since is freed, and each kept buffer is set aside (as <see cref="BufferPool.Trim"/> does for the
    /// pool; Motor freed unused buffers at GC, §7.5).  Apart from ObjectReader, so that the reader
    /// has no static constructor to check on its paths.
    /// </summary>
    private static class ReceiveBuffers
    {
        private static readonly List<WeakReference<ObjectReader>> s_readers = [];
        private static bool s_trimming; // Trim registered for gen-2 collections (under the list's lock)

        /// <summary>This thread's reader, made at its first receive or decode and listed for the trim.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static ObjectReader NewReader()
        {
            var r = new ObjectReader();
            lock (s_readers)
            {
                if (!s_trimming)
                {
                    Gen2Callback.Register(Trim);
                    s_trimming = true;
                }
                s_readers.Add(new WeakReference<ObjectReader>(r));
            }
            return t_cached = r;
        }

        /// <summary>Frees the buffers set aside at the previous gen-2 collection and sets aside those kept since (finalizer thread).</summary>
        private static void Trim()
        {
            lock (s_readers)
            {
                for (int i = s_readers.Count - 1; i >= 0; i--)
                {
                    if (!s_readers[i].TryGetTarget(out ObjectReader? r))
                    {
                        s_readers.RemoveAt(i); // its thread has ended: the reader's finalizer frees its buffers
                        continue;
                    }
                    Interlocked.Exchange(ref r._idleBuffer, null)?.Free();
                    Volatile.Write(ref r._idleBuffer, Interlocked.Exchange(ref r._receiveBuffer, null));
                }
            }
        }
    }

    /// <summary>
    /// Decodes the body of one payload (<paramref name="length"/> bytes at <paramref name="body"/>,
    /// after the header that PayloadChannel checked): a type table of <paramref name="tableBytes"/>,
    /// then the objects.  Any fault in it is a <see cref="TransportException"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static object? Decode(byte* body, long length, int tableBytes)
    {
        // The thread's reader stays cached while in use (no reference stored per payload); a payload
        // decoded while it is busy (a static constructor run by the decoding) gets a reader of its own.
        ObjectReader r = t_cached ?? ReceiveBuffers.NewReader();
        if (r._busy)
            r = new ObjectReader();
        r._busy = true;
        try
        {
            return r.DecodeCore(body, length, tableBytes);
        }
        catch (Exception e) when (e is ArgumentException or OverflowException or InvalidCastException or TypeLoadException
                                    or BadImageFormatException or NotSupportedException or MemberAccessException)
        {
            throw new TransportException(SR.Format(SR.PayloadMalformed, e.Message), e);
        }
        finally
        {
            r.Reset();
            r._busy = false;
        }
    }

    internal long Remaining => _end - _pos;

    /// <summary>Consumes <paramref name="bytes"/> bytes and returns where they start.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal byte* Take(long bytes)
    {
        byte* p = _pos;
        if ((ulong)bytes > (ulong)(_end - p))
            throw Truncated(bytes);
        _pos = p + bytes;
        return p;
    }

    /// <summary>The refusal of a read of <paramref name="bytes"/> bytes past the end (apart, so that <see cref="Take"/> stays small).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private TransportException Truncated(long bytes) =>
        TransportErrors.Malformed(SR.Format(SR.PayloadTruncated, bytes, _end - _pos));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal int ReadInt32() => Unsafe.ReadUnaligned<int>(Take(4));

    private byte ReadByte() => *Take(1);

    /// <summary>A count of items taking <paramref name="itemBytes"/> bytes each, checked against the bytes left.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal int ReadCount(long itemBytes)
    {
        int n = ReadInt32();
        if (n < 0 || n * itemBytes > _end - _pos)
            throw BadCount(n);
        return n;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private TransportException BadCount(int n) =>
        TransportErrors.Malformed(SR.Format(SR.PayloadCount, n, Remaining));

    /// <summary>Queues an object for pass 2.</summary>
    internal void Defer(object obj, TypeCodec codec, byte* body)
    {
        if (_deferredCount == _deferred.Length)
            Array.Resize(ref _deferred, _deferred.Length * 2);
        _deferred[_deferredCount++] = new Deferred { Obj = obj, Codec = codec, Body = body };
    }

    /// <summary>
    /// Queues a set or dictionary for pass 2 after every object <see cref="Defer"/> queued: its
    /// elements' hash codes may be computed from their fields, which are filled by then.
    /// </summary>
    internal void DeferHashed(object obj, TypeCodec codec, byte* body)
    {
        if (_hashedCount == _hashed.Length)
            Array.Resize(ref _hashed, Math.Max(8, _hashed.Length * 2));
        _hashed[_hashedCount++] = new Deferred { Obj = obj, Codec = codec, Body = body };
    }

    /// <summary>The object with id <paramref name="id"/> (null for 0), checked to be a <typeparamref name="T"/>.  Called by generated code.</summary>
    internal T? Ref<T>(int id) where T : class
    {
        if (id == 0)
            return null;
        if ((uint)(id - 1) < (uint)_count && _objects[id - 1].Value is T value)
            return value;
        throw BadReference(id, typeof(T));
    }

    /// <summary>
    /// The object with id <paramref name="id"/> (null for 0), not yet checked for type: generated
    /// class and struct bodies check it in line (isinst of the field's type, which the JIT reduces
    /// to a method-table comparison for exact types) and throw <see cref="BadReference"/> otherwise.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal object? RefUnchecked(int id)
    {
        if (id == 0)
            return null;
        if ((uint)(id - 1) < (uint)_count)
            return _objects[id - 1].Value;
        throw BadReference(id, typeof(object));
    }

    /// <summary>The refusal of reference <paramref name="id"/> where a <paramref name="expected"/> is required.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal TransportException BadReference(int id, Type expected) =>
        (uint)(id - 1) < (uint)_count
            ? TransportErrors.Malformed(SR.Format(SR.PayloadReferenceType, id, TransportErrors.Name(_objects[id - 1].Value!.GetType()), TransportErrors.Name(expected)))
            : TransportErrors.Malformed(SR.Format(SR.PayloadReferenceId, id, _count));

    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // a loop over every object: no tier-0 pass
    private object? DecodeCore(byte* body, long length, int tableBytes)
    {
        _pos = body;
        _end = body + length;
        TypeTable table = ResolveTable(Take(tableBytes), tableBytes);
        int count = ReadCount(4);
        if (_objects.Length < count)
            _objects = new ObjectSlot[Math.Max(count, _objects.Length * 2)];
        for (int i = 0; i < count; i++)
        {
            int entry = ReadInt32();
            if ((uint)entry >= (uint)table.Types.Length)
                throw TransportErrors.Malformed(SR.Format(SR.PayloadEntry, entry, table.Types.Length));
            TypeCodec codec = table.Codecs[entry] ?? throw new TransportException(SR.Format(SR.PayloadNotInstantiable, TransportErrors.Name(table.Types[entry])));
            _objects[i].Value = codec.Create(this);
            _count = i + 1;
        }
        if (_pos != _end)
            throw TransportErrors.Malformed(SR.Format(SR.PayloadTrailing, _end - _pos));
        for (int i = 0; i < _deferredCount; i++)
            _deferred[i].Codec.Fill(this, _deferred[i].Obj, _deferred[i].Body);
        for (int i = 0; i < _hashedCount; i++)
            _hashed[i].Codec.Fill(this, _hashed[i].Obj, _hashed[i].Body);
        return count == 0 ? null : _objects[0].Value;
    }

    private void Reset()
    {
        ObjectSlot.Clear(_objects, _count);
        if (_deferredCount > 16)
            Array.Clear(_deferred, 0, _deferredCount);
        else
            for (int i = 0; i < _deferredCount; i++)
                _deferred[i] = default;
        if (_hashedCount > 0)
        {
            Array.Clear(_hashed, 0, _hashedCount);
            if (_hashed.Length > 4 * Math.Max(_hashedCount, SmallGraph))
                _hashed = [];
            _hashedCount = 0;
        }
        // keep the tables for graphs of similar size; drop them after a much smaller one
        if (_objects.Length > 4 * Math.Max(_count, SmallGraph))
            _objects = new ObjectSlot[16];
        if (_deferred.Length > 4 * Math.Max(_deferredCount, SmallGraph))
            _deferred = new Deferred[16];
        _count = 0;
        _deferredCount = 0;
    }

    /// <summary>
    /// Resolves the type table; a table identical to the previous payload's
    /// (ping-pong, repeated sends) is reused after one byte comparison.
    /// </summary>
    private TypeTable ResolveTable(byte* bytes, int length)
    {
        var span = new ReadOnlySpan<byte>(bytes, length);
        if (_lastTable is not null && span.SequenceEqual(_lastTable.Bytes))
            return _lastTable;
        byte* savedEnd = _end;
        _end = bytes + length;
        _pos = bytes;
        int count = ReadCount(2);
        var types = new Type[count];
        var codecs = new TypeCodec?[count];
        for (int i = 0; i < count; i++)
        {
            Type t = ReadEntry(types, i, out TypeCodec codec);
            types[i] = t;
            codecs[i] = codec.IsInstantiable ? codec : null;
        }
        if (_pos != _end)
            throw TransportErrors.Malformed(SR.Format(SR.PayloadTrailing, _end - _pos));
        _end = savedEnd;
        return _lastTable = new TypeTable { Bytes = span.ToArray(), Types = types, Codecs = codecs };
    }

    private Type ReadEntry(Type[] earlier, int i, out TypeCodec codec)
    {
        byte kind = ReadByte();
        Type t;
        switch (kind)
        {
            case WireFormat.EntryBuiltin:
                byte code = ReadByte();
                if (code >= WireFormat.Builtins.Length)
                    throw TransportErrors.Malformed(SR.Format(SR.PayloadBuiltin, code));
                t = WireFormat.Builtins[code];
                break;
            case WireFormat.EntryVector:
                Type elementType = earlier[EarlierEntry(i)];
                codec = Codecs.VectorOf(elementType, Codecs.For(elementType));
                return codec.Type;
            case WireFormat.EntryMdArray:
                Type element = earlier[EarlierEntry(i)];
                int rank = ReadByte();
                if (rank is < 1 or > WireFormat.MaxRank)
                    throw TransportErrors.Malformed(SR.Format(SR.PayloadRank, rank));
                t = Codecs.RunTimeArrayType(element, rank, vector: false);
                break;
            case WireFormat.EntryList:
            case WireFormat.EntryHashSet:
            case WireFormat.EntryDictionary:
                Type first = earlier[EarlierEntry(i)];
                t = kind == WireFormat.EntryDictionary
                    ? Codecs.CollectionType(kind, first, earlier[EarlierEntry(i)])
                    : Codecs.CollectionType(kind, first, null);
                break;
            case WireFormat.EntryNamed:
                string name = ReadName(), assembly = ReadName();
                ulong hash = Unsafe.ReadUnaligned<ulong>(Take(8));
                int argc = ReadByte();
                var args = new Type[argc];
                for (int a = 0; a < argc; a++)
                    args[a] = earlier[EarlierEntry(i)];
                Type definition = TypeResolver.Resolve(name, assembly);
                if (definition.IsGenericTypeDefinition != (argc > 0) ||
                    (argc > 0 && definition.GetGenericArguments().Length != argc))
                    throw TransportErrors.Malformed(SR.Format(SR.PayloadArity, TransportErrors.Name(definition), argc));
                t = argc > 0 ? GenericInstance(definition, args) : definition;
                codec = Codecs.For(t);
                if (codec.LayoutHash != hash)
                    throw new TransportException(SR.Format(SR.PayloadLayout, TransportErrors.Name(t)));
                return t;
            default:
                throw TransportErrors.Malformed(SR.Format(SR.PayloadEntryKind, kind));
        }
        codec = Codecs.For(t);
        return t;
    }

    /// <summary>A generic [Transportable] type's instance (generic types' codecs are built at run time).</summary>
    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Reached only when dynamic code is supported; under NativeAOT the refusal says why.")]
    [UnconditionalSuppressMessage("Trimming", "IL2055", Justification = "The definition is a loaded [Transportable] type; its instance's codec reads fields by reflection, as the run-time path documents.")]
    private static Type GenericInstance(Type definition, Type[] args)
    {
        if (!RuntimeFeature.IsDynamicCodeSupported)
            throw new TransportException(Codecs.NoCompileTimeCodec(definition));
        return definition.MakeGenericType(args);
    }

    private int EarlierEntry(int current)
    {
        int e = ReadInt32();
        if ((uint)e >= (uint)current)
            throw TransportErrors.Malformed(SR.Format(SR.PayloadEntry, e, current));
        return e;
    }

    private string ReadName()
    {
        int n = ReadCount(1);
        return Encoding.UTF8.GetString(Take(n), n);
    }
}
