using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.MP.Transport;
using System.Runtime.ExceptionServices;

namespace System.MP;

// Split representations for the object collectives (Motor §4.2.2, §7.5): one
// independently decodable payload per rank, laid out side by side; counts go first,
// then Scatterv/Gatherv/Allgatherv of bytes in rounds of at most WireFormat.ChunkBytes
// per rank, so MPI's int counts and displacements never overflow (RoundPlan).
public unsafe partial class Communicator
{
    /// <summary>
    /// Encodes <paramref name="p"/> payloads side by side, payload r written by
    /// <paramref name="write"/>(writer, r) (which returns where it starts).
    /// </summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private static NativeBuffer EncodePieces(int p, long[] starts, long[] counts, Func<ObjectWriter, int, long> write)
    {
        NativeBuffer buffer = BufferPool.Rent(BufferPool.InitialBytes);
        ObjectWriter w = ObjectWriter.Rent(buffer, 0);
        try
        {
            for (int r = 0; r < p; r++)
            {
                starts[r] = write(w, r);
                counts[r] = w.Position - starts[r];
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

    /// <summary>Encodes consecutive slices of <paramref name="array"/>, slice r of <paramref name="lengths"/>(r) elements, one payload per rank.</summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private static NativeBuffer EncodeSlices<T>(T[] array, int p, long[] starts, long[] counts, Func<int, int> lengths)
    {
        int offset = 0;
        return EncodePieces(p, starts, counts, (w, r) =>
        {
            int n = lengths(r);
            long start = w.WritePiece(null, array, offset, n);
            offset += n;
            return start;
        });
    }

    /// <summary>
    /// OScatter and its v-forms, and the outcomes of the object reductions: the root
    /// encodes one payload per receiving rank (<paramref name="encode"/>, at the root
    /// only), the sizes are broadcast, then the payloads go out by Scatterv in rounds.
    /// A root that failed (<paramref name="failure"/>, or an encoding failure) sends
    /// a marker instead of sizes, and every rank throws.
    /// </summary>
    /// <returns>This rank's payload decoded as a <typeparamref name="TOut"/>; default where nothing is received.</returns>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private TOut? ScatterPieces<TOut>(Func<long[], long[], NativeBuffer>? encode, int root, CommHandle h, Failure failure = default)
    {
        bool atRoot = IsRoot(root), receives = !_isInter || !atRoot;
        int p = _isInter && atRoot ? _peerSize : _size; // the ranks that get a payload
        var counts = new long[p];
        var starts = new long[p];
        NativeBuffer? pieces = null;
        if (atRoot)
        {
            if (failure.Happened)
            {
                counts[0] = failure.Marker;
                Bcast(counts, root);
                ThrowFailure(failure, root);
            }
            try
            {
                pieces = encode!(starts, counts);
            }
            catch (TransportException)
            {
                counts[0] = EncodeFailedMarker;
                Bcast(counts, root);
                throw;
            }
        }
        try
        {
            Bcast(counts, root);
            ThrowIfRootFailed(counts[0], root);
            var plan = new RoundPlan(counts, p);
            NativeBuffer mine = BufferPool.Rent(receives ? Math.Min(counts[_rank], plan.Slice) : 0);
            try
            {
                var block = new RoundReceiver(mine, receives ? counts[_rank] : 0);
                for (int k = 0; k < plan.Rounds; k++)
                {
                    long part = receives ? plan.Part(counts[_rank], k) : 0;
                    ScattervRound(plan, k, pieces, starts, counts, receives ? block.Next(part) : null, root, h);
                    block.Arrived(part);
                }
                return receives ? Expect<TOut>(PayloadChannel.Decode(block.Payload, counts[_rank])) : default;
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
    /// OGather (root ≥ 0, or <see cref="Mpi.Root"/> / the root's rank on an
    /// intercommunicator) or OAllgather (root -1): the payload sizes first, then
    /// the payloads in rounds.  Every rank learns every size (and so every
    /// encoding failure and the same round plan): by Allgather on an
    /// intracommunicator; on an intercommunicator the sizes meet at the root,
    /// which broadcasts them back to the sending group.
    /// </summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private T[]? GatherObjects<T>(T[]? block, int root, CommHandle h)
    {
        T[][]? blocks = GatherBlocks(block, root, h);
        if (blocks is null)
            return null;
        int n = 0;
        foreach (T[] b in blocks)
            n += b.Length;
        var result = new T[n];
        int at = 0;
        foreach (T[] b in blocks)
        {
            Array.Copy(b, 0, result, at, b.Length);
            at += b.Length;
        }
        return result;
    }

    /// <summary>The blocks of <see cref="GatherObjects"/>, one per rank in rank order, at the ranks that receive; null elsewhere.</summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private T[][]? GatherBlocks<T>(T[]? block, int root, CommHandle h)
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
                for (int r = 0; r < p; r++)
                    blocks[r] = Expect<T[]>(PayloadChannel.Decode(all.Pointer + starts[r], counts[r]))!;
                return blocks;
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

        internal RoundPlan(long[] counts, int p) : this(Sum(counts), Max(counts), p) { }

        /// <summary>
        /// The plan for payloads of at most <paramref name="max"/> bytes where no rank sends
        /// or receives more than <paramref name="sum"/> bytes in all (the all-to-all exchange,
        /// where every rank must compute the plan from the same job-wide values).
        /// </summary>
        internal RoundPlan(long sum, long max, int p)
        {
            max = Math.Max(max, 1);
            Slice = sum <= WireFormat.ChunkBytes ? max : Math.Max(WireFormat.ChunkBytes / p, 1);
            Rounds = (int)((max + Slice - 1) / Slice);
        }

        internal static long Sum(long[] counts)
        {
            long sum = 0;
            foreach (long c in counts)
                sum += c;
            return sum;
        }

        internal static long Max(long[] counts)
        {
            long max = 0;
            foreach (long c in counts)
                max = Math.Max(max, c);
            return max;
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

    // mine: where this rank's part of round k goes (null: it receives nothing).
    private void ScattervRound(in RoundPlan plan, int k, NativeBuffer? pieces, long[] starts, long[] counts, byte* mine, int root, CommHandle h)
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
                CollDesc d = Desc<byte>(CollKind.Scatterv, mine is null ? 0 : parts[_rank], send, mine, root);
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

    private void GathervRound(in RoundPlan plan, int k, byte* mine, NativeBuffer all, long[] starts, long[] counts, int root, CommHandle h)
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

    private void AlltoallvRound(in RoundPlan plan, int k, byte* send, long[] sendStarts, long[] sendCounts,
                                byte* recv, long[] recvStarts, long[] recvCounts, CommHandle h)
    {
        int p = sendCounts.Length;
        int[] sparts = new int[p], sdispls = new int[p], rparts = new int[p], rdispls = new int[p];
        NativeBuffer? sendStaging = null, recvStaging = null;
        try
        {
            byte* s = Layout(plan, k, send, sendStarts, sendCounts, sparts, sdispls, ref sendStaging, pack: true);
            byte* r = Layout(plan, k, recv, recvStarts, recvCounts, rparts, rdispls, ref recvStaging, pack: false);
            fixed (int* sc = sparts)
            fixed (int* sd = sdispls)
            fixed (int* rc = rparts)
            fixed (int* rd = rdispls)
            {
                CollDesc d = Desc<byte>(CollKind.Alltoallv, 0, s, r, 0);
                d.SendCounts = sc;
                d.SDispls = sd;
                d.RecvCounts = rc;
                d.RDispls = rd;
                Run(h, &d, false);
            }
            Unpack(plan, k, recv, recvStarts, rparts, rdispls, r);
        }
        finally
        {
            if (sendStaging is not null)
                BufferPool.Return(sendStaging);
            if (recvStaging is not null)
                BufferPool.Return(recvStaging);
        }
    }
}
