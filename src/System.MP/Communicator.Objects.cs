using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.MP.Transport;
using System.Runtime.ExceptionServices;

namespace System.MP;

// Object operations (Motor Figure 4, §4.2.2, §7.5): whole object graphs,
// serialized into pooled native memory (nothing to pin) and received by
// matched probe (MPI-4.0 §3.8.2), so the receiver learns the size without
// an extra message and no other receive or thread can take the payload.
// Object collectives use split representations: one independently decodable
// payload per rank, counts first, then Scatterv/Gatherv/Allgatherv of bytes.
// Payloads above WireFormat.ChunkBytes travel in rounds of at most that
// many bytes, so MPI's int counts and displacements never overflow.
public unsafe partial class Communicator
{
    private const string ObjectsNeedDynamicCode = Codecs.DynamicCodeMessage;

    /// <summary>
    /// Sends an object graph to <paramref name="dest"/>: the object's value
    /// fields, the objects its [Transportable] reference fields lead to, array
    /// elements, strings; shared references and cycles arrive as such.
    /// </summary>
    /// <param name="obj">The root object (may be null).</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <exception cref="TransportException">An object of the graph may not travel; nothing was sent.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public void OSend(object? obj, int dest, int tag)
    {
        int h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        ObjectTransport.Encoded payload = ObjectTransport.Encode(obj);
        try
        {
            SendPayload(payload, dest, tag, h);
        }
        finally
        {
            payload.Release();
        }
    }

    /// <summary>
    /// Sends <paramref name="count"/> elements of a one-dimensional array from
    /// <paramref name="offset"/>; the receiver gets an array of that many elements.
    /// </summary>
    /// <param name="array">A one-dimensional, zero-based array.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <exception cref="TransportException">An element may not travel; nothing was sent.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public void OSend(Array array, int offset, int count, int dest, int tag)
    {
        CheckVectorSlice(array, offset, count);
        int h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        ObjectTransport.Encoded payload = ObjectTransport.Encode(null, array, offset, count);
        try
        {
            SendPayload(payload, dest, tag, h);
        }
        finally
        {
            payload.Release();
        }
    }

    /// <summary>Receives an object graph sent with OSend.</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>A copy of the sent graph's root (null from <see cref="Mpi.ProcNull"/>).</returns>
    /// <exception cref="TransportException">The payload is malformed or names a type that may not travel; the message is consumed.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public object? ORecv(int source, int tag) => ORecv(source, tag, out _);

    /// <summary>Receives an object graph sent with OSend, and its status.</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="status">Sender, tag and payload size in bytes.</param>
    /// <returns>A copy of the sent graph's root (null from <see cref="Mpi.ProcNull"/>).</returns>
    /// <exception cref="TransportException">The payload is malformed or names a type that may not travel; the message is consumed.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public object? ORecv(int source, int tag, out Status status)
    {
        int h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        return ReceivePayload(source, tag, h, out status);
    }

    /// <summary>Receives an object graph whose root must be a <typeparamref name="T"/> (or null).</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <exception cref="TransportException">The payload is malformed, or its root is not a <typeparamref name="T"/>.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? ORecv<T>(int source, int tag) => Expect<T>(ORecv(source, tag, out _));

    /// <summary>Receives an object graph whose root must be a <typeparamref name="T"/> (or null), and its status.</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="status">Sender, tag and payload size in bytes.</param>
    /// <exception cref="TransportException">The payload is malformed, or its root is not a <typeparamref name="T"/>.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? ORecv<T>(int source, int tag, out Status status) => Expect<T>(ORecv(source, tag, out status));

    /// <summary>
    /// Starts sending an object graph.  The graph is serialized before this
    /// returns, so the objects may change at once; the request completes when
    /// the payload has left.
    /// </summary>
    /// <param name="obj">The root object (may be null).</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <exception cref="TransportException">An object of the graph may not travel; nothing was sent.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public ObjectRequest OISend(object? obj, int dest, int tag)
    {
        int h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        return ObjectRequest.PostSend(ObjectTransport.Encode(obj), dest, tag, h);
    }

    /// <summary>
    /// Starts receiving an object graph whose root must be a <typeparamref name="T"/>;
    /// <see cref="ObjectRequest{T}.Result"/> is the object.  The message is matched
    /// (matched probe) when the request is tested or waited for.
    /// </summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public ObjectRequest<T> OIRecv<T>(int source, int tag)
    {
        int h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        return new ObjectRequest<T>(this, source, tag, h);
    }

    /// <summary>
    /// Broadcasts the root's object graph: the root gets its object back, every other rank a copy. Collective.
    /// On an intercommunicator the root passes <see cref="Mpi.Root"/>, the rest of its group
    /// <see cref="Mpi.ProcNull"/> (they get default), and the other group the root's rank; every
    /// rank of the other group gets a copy.
    /// </summary>
    /// <param name="obj">At the root, the object (may be null); ignored elsewhere.</param>
    /// <param name="root">Rank whose object is broadcast.</param>
    /// <exception cref="TransportException">At the root, an object may not travel (every rank throws); elsewhere, a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OBcast<T>(T? obj, int root)
    {
        int h = Handle;
        CheckRoot(root);
        if (_isInter && root == Mpi.ProcNull)
            return default;
        if (IsRoot(root))
        {
            ObjectTransport.Encoded payload = EncodeAtRoot(() => ObjectTransport.Encode(obj), root);
            try
            {
                Bcast(payload.Length, root);
                BcastBytes(payload.Pointer, payload.Length, root, h);
            }
            finally
            {
                payload.Release();
            }
            return obj;
        }
        long length = Bcast(0L, root);
        ThrowIfRootFailed(length, root);
        NativeBuffer buffer = BufferPool.Rent(length);
        try
        {
            BcastBytes(buffer.Pointer, length, root, h);
            return Expect<T>(ObjectReader.Decode(buffer.Pointer, length));
        }
        finally
        {
            BufferPool.Return(buffer);
        }
    }

    /// <summary>
    /// Splits the root's array into Size blocks in rank order and gives block r
    /// to rank r: with n elements and p ranks, rank r gets n / p elements, plus
    /// one when r &lt; n % p.  Each block travels as its own payload, so
    /// references shared between elements of one block stay shared. Collective.
    /// </summary>
    /// <remarks>
    /// On an intercommunicator the root (<see cref="Mpi.Root"/>) splits the array into
    /// RemoteSize blocks for the other group, which passes the root's rank; the root and the
    /// rest of its group (<see cref="Mpi.ProcNull"/>) get null.
    /// </remarks>
    /// <param name="array">At the root, the elements; ignored elsewhere (may be null).</param>
    /// <param name="root">Rank that scatters.</param>
    /// <returns>This rank's block.</returns>
    /// <exception cref="TransportException">At the root, an element may not travel (every rank throws); elsewhere, a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[]? OScatter<T>(T[]? array, int root)
    {
        int h = Handle;
        CheckRoot(root);
        if (_isInter && root == Mpi.ProcNull)
            return null;
        bool atRoot = IsRoot(root), receives = !_isInter || !atRoot;
        int p = _isInter && atRoot ? _peerSize : _size; // the ranks that get a block
        var counts = new long[p];
        var starts = new long[p];
        NativeBuffer? pieces = null;
        if (atRoot)
        {
            if (array is null)
                throw new ArgumentNullException(nameof(array), SR.Format(SR.BufferRequiredAtRoot, nameof(array)));
            try
            {
                pieces = EncodeBlocks(array, p, starts, counts);
            }
            catch (TransportException)
            {
                counts[0] = -1;
                Bcast(counts, root);
                throw;
            }
        }
        try
        {
            Bcast(counts, root);
            ThrowIfRootFailed(counts[0], root);
            NativeBuffer mine = BufferPool.Rent(receives ? counts[_rank] : 0);
            try
            {
                var plan = new RoundPlan(counts, p);
                for (int k = 0; k < plan.Rounds; k++)
                    ScattervRound(plan, k, pieces, starts, counts, receives ? mine.Pointer : null, root, h);
                return receives ? Expect<T[]>(ObjectReader.Decode(mine.Pointer, counts[_rank])) : null;
            }
            finally
            {
                BufferPool.Return(mine);
            }
        }
        finally
        {
            if (pieces is not null)
                BufferPool.Return(pieces);
        }
    }

    /// <summary>
    /// Collects every rank's block at the root, concatenated in rank order.
    /// Each block travels as its own payload. Collective.
    /// </summary>
    /// <remarks>
    /// On an intercommunicator the root (<see cref="Mpi.Root"/>) collects the blocks of
    /// every rank of the other group, which passes the root's rank; the root's own
    /// <paramref name="block"/> is ignored, and the rest of its group passes
    /// <see cref="Mpi.ProcNull"/> and gets null.
    /// </remarks>
    /// <param name="block">This rank's elements.</param>
    /// <param name="root">Rank that collects.</param>
    /// <returns>At the root, all elements in rank order; null elsewhere.</returns>
    /// <exception cref="TransportException">A block's element may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[]? OGather<T>(T[] block, int root)
    {
        int h = Handle;
        CheckRoot(root);
        if (_isInter && root == Mpi.ProcNull)
            return null;
        if (block is null && !(_isInter && root == Mpi.Root))
            ThrowHelper.ThrowNull(nameof(block));
        return GatherObjects(block, root, h);
    }

    /// <summary>Every rank gets every rank's block, concatenated in rank order. Collective; intracommunicators only.</summary>
    /// <param name="block">This rank's elements.</param>
    /// <returns>All elements in rank order.</returns>
    /// <exception cref="TransportException">A block's element may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[] OAllgather<T>(T[] block)
    {
        int h = Handle;
        RequireIntra("OAllgather");
        if (block is null)
            ThrowHelper.ThrowNull(nameof(block));
        return GatherObjects(block, -1, h)!;
    }

    // ---- machinery ----

    private static void CheckVectorSlice(Array array, int offset, int count)
    {
        if (array is null)
            ThrowHelper.ThrowNull(nameof(array));
        if (!array.GetType().IsSZArray)
            throw new ArgumentException(SR.Format(SR.ArrayNotVector, TransportErrors.Name(array.GetType())), nameof(array));
        if ((uint)offset > (uint)array.Length || (uint)count > (uint)(array.Length - offset))
            ThrowHelper.ThrowSlice(array.Length, offset, count);
    }

    /// <summary>The root of a received graph as a <typeparamref name="T"/>.</summary>
    internal static T? Expect<T>(object? obj)
    {
        if (obj is T value)
            return value;
        if (obj is null && default(T) is null)
            return default;
        throw new TransportException(SR.Format(SR.ReceivedWrongType,
            obj is null ? "null" : TransportErrors.Name(obj.GetType()), TransportErrors.Name(typeof(T))));
    }

    /// <summary>Sends one payload: one message, or (above the chunk size) a run of messages with the same tag.</summary>
    internal static void SendPayload(ObjectTransport.Encoded payload, int dest, int tag, int comm)
    {
        byte* p = payload.Pointer;
        long length = payload.Length;
        int chunk = WireFormat.ChunkBytes;
        if (length <= chunk)
        {
            SendCore(p, length, dest, tag, comm, CoreConst.SendStandard);
            return;
        }
        *(uint*)(p + WireFormat.OffsetFlags) |= WireFormat.FlagChunked;
        for (long off = 0; off < length; off += chunk)
            SendCore(p + off, Math.Min(chunk, length - off), dest, tag, comm, CoreConst.SendStandard);
    }

    /// <summary>Receives and decodes one payload (all its chunks) of a matched message.</summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    internal static object? ReceivePayload(int source, int tag, int comm, out Status status)
    {
        Status first = MProbeCore(source, tag, comm, out long msg);
        return ReceiveMatched(first, msg, comm, out status);
    }

    /// <summary>Takes a matching message out of matching if one is pending (MPI_Improbe).</summary>
    internal static bool TryMatch(int source, int tag, int comm, out Status first, out long message)
    {
        Status st;
        long msg;
        int rc = Core.Improbe(source, tag, comm, &msg, &st);
        if (rc < 0)
            ThrowHelper.ThrowCore(rc);
        first = st;
        message = msg;
        return rc == 1;
    }

    /// <summary>Receives and decodes the payload of a matched message (and its continuation chunks).</summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    internal static object? ReceiveMatched(Status first, long msg, int comm, out Status status)
    {
        NativeBuffer buffer = BufferPool.Rent(first.ByteCount);
        try
        {
            status = Message.Receive(buffer.Pointer, first.ByteCount, msg);
            if (status.Source == Mpi.ProcNull)
                return null;
            long length = ReceiveContinuation(buffer, status, comm);
            status = new Status(status.Source, status.Tag, length);
            return ObjectReader.Decode(buffer.Pointer, length);
        }
        finally
        {
            BufferPool.Return(buffer);
        }
    }

    /// <summary>
    /// For a chunked payload, receives the messages that follow from the same
    /// source and tag.  The buffer grows only by bytes that actually arrived,
    /// whatever the header announces.
    /// </summary>
    private static long ReceiveContinuation(NativeBuffer buffer, Status first, int comm)
    {
        long received = first.ByteCount;
        if (received < WireFormat.HeaderBytes || (*(uint*)(buffer.Pointer + WireFormat.OffsetFlags) & WireFormat.FlagChunked) == 0)
            return received;
        long announced = *(long*)(buffer.Pointer + WireFormat.OffsetTotal);
        while (received < announced)
        {
            Status next = MProbeCore(first.Source, first.Tag, comm, out long msg);
            buffer.EnsureCapacity(received + next.ByteCount);
            Message.Receive(buffer.Pointer + received, next.ByteCount, msg);
            received += next.ByteCount;
            if (next.ByteCount == 0 || received > announced)
                throw TransportErrors.Malformed(SR.Format(SR.PayloadChunk, next.ByteCount, announced));
        }
        return received;
    }

    /// <summary>At the root of a collective: encode, or tell the other ranks (length -1) that encoding failed, then rethrow.</summary>
    private ObjectTransport.Encoded EncodeAtRoot(Func<ObjectTransport.Encoded> encode, int root)
    {
        try
        {
            return encode();
        }
        catch (TransportException)
        {
            Bcast(-1L, root);
            throw;
        }
    }

    private static void ThrowIfRootFailed(long length, int root)
    {
        if (length < 0)
            throw new TransportException(SR.Format(SR.RootEncodeFailed, root));
    }

    private static void BcastBytes(byte* p, long length, int root, int comm)
    {
        int chunk = WireFormat.ChunkBytes;
        long off = 0;
        do
        {
            CollDesc d = Desc<byte>(CollKind.Bcast, Math.Min(chunk, length - off), null, p + off, root);
            Run(comm, &d, false);
            off += chunk;
        }
        while (off < length);
    }

    /// <summary>Encodes the OScatter blocks of <paramref name="array"/> side by side, one payload per rank.</summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private static NativeBuffer EncodeBlocks<T>(T[] array, int p, long[] starts, long[] counts)
    {
        NativeBuffer buffer = BufferPool.Rent(BufferPool.InitialBytes);
        ObjectWriter w = ObjectWriter.Rent(buffer, 0);
        try
        {
            int n = array.Length, offset = 0;
            for (int r = 0; r < p; r++)
            {
                int count = n / p + (r < n % p ? 1 : 0);
                starts[r] = w.WritePiece(null, array, offset, count);
                counts[r] = w.Position - starts[r];
                offset += count;
            }
            return buffer;
        }
        catch
        {
            BufferPool.Return(buffer);
            throw;
        }
        finally
        {
            w.Return();
        }
    }

    /// <summary>
    /// OGather (root ≥ 0, or <see cref="Mpi.Root"/> / the root's rank on an
    /// intercommunicator) or OAllgather (root -1): the payload sizes first, then
    /// the payloads in rounds.  Every rank learns every size (and so every
    /// encoding failure and the same round plan): by Allgather on an
    /// intracommunicator; on an intercommunicator the sizes meet at the root,
    /// which broadcasts them back to the sending group.
    /// </summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private T[]? GatherObjects<T>(T[]? block, int root, int h)
    {
        bool receives = _isInter ? root == Mpi.Root : root < 0 || root == _rank;
        bool sends = !(_isInter && receives);
        int p = _isInter && receives ? _peerSize : _size; // the ranks whose blocks are collected
        ObjectTransport.Encoded mine = default;
        TransportException? failure = null;
        try
        {
            if (sends)
                mine = ObjectTransport.Encode(null, block!, 0, block!.Length);
        }
        catch (TransportException e)
        {
            failure = e;
        }
        var counts = new long[p];
        try
        {
            long[] size = [failure is null ? mine.Length : -1L];
            if (!_isInter)
            {
                Allgather(size, counts);
            }
            else
            {
                Gather(size, receives ? counts : null, root);
                Bcast(counts, root);
            }
            if (failure is not null)
                ExceptionDispatchInfo.Throw(failure); // keeps the encoder's stack trace
            for (int r = 0; r < p; r++)
                if (counts[r] < 0)
                    throw new TransportException(SR.Format(SR.RankEncodeFailed, r));
            var starts = new long[p];
            long total = 0;
            for (int r = 0; r < p; r++)
            {
                starts[r] = total;
                total += counts[r];
            }
            NativeBuffer all = BufferPool.Rent(receives ? total : 0);
            try
            {
                var plan = new RoundPlan(counts, p);
                for (int k = 0; k < plan.Rounds; k++)
                    GathervRound(plan, k, sends ? mine.Pointer : null, all, starts, counts, root, h);
                if (!receives)
                    return null;
                var blocks = new T[p][];
                int n = 0;
                for (int r = 0; r < p; r++)
                {
                    blocks[r] = Expect<T[]>(ObjectReader.Decode(all.Pointer + starts[r], counts[r]))!;
                    n += blocks[r].Length;
                }
                var result = new T[n];
                int at = 0;
                foreach (T[] b in blocks)
                {
                    Array.Copy(b, 0, result, at, b.Length);
                    at += b.Length;
                }
                return result;
            }
            finally
            {
                BufferPool.Return(all);
            }
        }
        finally
        {
            if (failure is null && sends)
                mine.Release();
        }
    }

    /// <summary>
    /// How per-rank payloads are cut into rounds: one round when they fit in
    /// one chunk together, else rounds of <see cref="Slice"/> bytes per rank.
    /// Every rank computes the same plan from the same counts.
    /// </summary>
    private readonly struct RoundPlan
    {
        internal readonly long Slice;
        internal readonly int Rounds;

        internal RoundPlan(long[] counts, int p)
        {
            long sum = 0, max = 1;
            foreach (long c in counts)
            {
                sum += c;
                max = Math.Max(max, c);
            }
            Slice = sum <= WireFormat.ChunkBytes ? max : Math.Max(WireFormat.ChunkBytes / p, 1);
            Rounds = (int)((max + Slice - 1) / Slice);
        }

        /// <summary>Bytes of a payload of <paramref name="count"/> bytes that travel in round <paramref name="k"/>.</summary>
        internal int Part(long count, int k) => (int)Math.Clamp(count - k * Slice, 0, Slice);
    }

    /// <summary>
    /// Fills MPI counts and displacements for round <paramref name="k"/> of
    /// payloads at <paramref name="starts"/> in <paramref name="buffer"/>.  When
    /// a displacement would pass the chunk size, the round's parts are packed
    /// (pack) into, or later unpacked from, a staging buffer.
    /// </summary>
    /// <returns>The buffer MPI uses: the payload buffer itself, or the staging buffer.</returns>
    private static byte* Layout(in RoundPlan plan, int k, byte* buffer, long[] starts, long[] counts,
                                int[] parts, int[] displs, ref NativeBuffer? staging, bool pack)
    {
        bool direct = true;
        long packed = 0;
        for (int r = 0; r < parts.Length; r++)
        {
            parts[r] = plan.Part(counts[r], k);
            long at = starts[r] + k * plan.Slice;
            direct &= at + parts[r] <= WireFormat.ChunkBytes;
            displs[r] = (int)Math.Min(at, int.MaxValue);
            packed += parts[r];
        }
        if (direct)
            return buffer;
        staging ??= BufferPool.Rent(packed);
        staging.EnsureCapacity(packed);
        long off = 0;
        for (int r = 0; r < parts.Length; r++)
        {
            displs[r] = (int)off;
            if (pack)
                Buffer.MemoryCopy(buffer + starts[r] + k * plan.Slice, staging.Pointer + off, parts[r], parts[r]);
            off += parts[r];
        }
        return staging.Pointer;
    }

    private static void Unpack(in RoundPlan plan, int k, byte* buffer, long[] starts, int[] parts, int[] displs, byte* staged)
    {
        if (staged == buffer)
            return;
        for (int r = 0; r < parts.Length; r++)
            Buffer.MemoryCopy(staged + displs[r], buffer + starts[r] + k * plan.Slice, parts[r], parts[r]);
    }

    private void ScattervRound(in RoundPlan plan, int k, NativeBuffer? pieces, long[] starts, long[] counts, byte* mine, int root, int h)
    {
        var parts = new int[counts.Length];
        var displs = new int[counts.Length];
        NativeBuffer? staging = null;
        try
        {
            byte* send = pieces is null ? null : Layout(plan, k, pieces.Pointer, starts, counts, parts, displs, ref staging, pack: true);
            for (int r = 0; r < parts.Length; r++)
                parts[r] = plan.Part(counts[r], k);
            fixed (int* c = parts)
            fixed (int* dp = displs)
            {
                // An intercommunicator's root receives nothing (mine is null there).
                CollDesc d = Desc<byte>(CollKind.Scatterv, mine is null ? 0 : parts[_rank], send,
                                        mine is null ? null : mine + k * plan.Slice, root);
                d.SendCounts = c;
                d.SDispls = dp;
                Run(h, &d, false);
            }
        }
        finally
        {
            if (staging is not null)
                BufferPool.Return(staging);
        }
    }

    private void GathervRound(in RoundPlan plan, int k, byte* mine, NativeBuffer all, long[] starts, long[] counts, int root, int h)
    {
        var parts = new int[counts.Length];
        var displs = new int[counts.Length];
        NativeBuffer? staging = null;
        try
        {
            bool receives = _isInter ? root == Mpi.Root : root < 0 || root == _rank;
            byte* recv = receives ? Layout(plan, k, all.Pointer, starts, counts, parts, displs, ref staging, pack: false) : null;
            for (int r = 0; r < parts.Length; r++)
                parts[r] = plan.Part(counts[r], k);
            fixed (int* c = parts)
            fixed (int* dp = displs)
            {
                // An intercommunicator's root sends nothing (mine is null there).
                bool sends = !(_isInter && receives);
                CollDesc d = Desc<byte>(root == -1 ? CollKind.Allgatherv : CollKind.Gatherv, sends ? parts[_rank] : 0,
                                        sends ? mine + k * plan.Slice : null, recv, root == -1 ? 0 : root);
                d.RecvCounts = c;
                d.RDispls = dp;
                Run(h, &d, false);
            }
            if (receives)
                Unpack(plan, k, all.Pointer, starts, parts, displs, recv);
        }
        finally
        {
            if (staging is not null)
                BufferPool.Return(staging);
        }
    }
}
