using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.MP.Transport;

namespace System.MP;

// The object collectives with uneven blocks: OScatterv and OGatherv keep
// each rank's block separate, OAlltoall and OAlltoallv exchange one payload per pair of
// ranks.  All use the split representation (Motor §4.2.2): one independently decodable
// payload per block, sizes first, then Scatterv/Gatherv/Alltoallv of bytes in rounds.
public unsafe partial class Communicator
{
    /// <summary>
    /// Scatters blocks of any lengths: rank r gets the root's <paramref name="blocks"/>[r], each
    /// block travelling as its own payload. Collective.
    /// </summary>
    /// <remarks>
    /// On an intercommunicator the root (<see cref="Mpi.Root"/>) passes one block per rank of the
    /// other group, which passes the root's rank; the root and the rest of its group
    /// (<see cref="Mpi.ProcNull"/>) get null.
    /// </remarks>
    /// <param name="blocks">At the root, one array per rank (empty for a rank that gets nothing); ignored elsewhere (may be null).</param>
    /// <param name="root">Rank that scatters.</param>
    /// <returns>This rank's block.</returns>
    /// <exception cref="ArgumentException">At the root, not one block per rank, or a null block (before anything is sent).</exception>
    /// <exception cref="TransportException">At the root, an element may not travel (every rank throws); elsewhere, a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[]? OScatterv<T>(T[][]? blocks, int root)
    {
        CommHandle h = Handle;
        CheckRoot(root);
        if (_isInter && root == Mpi.ProcNull)
            return null;
        if (IsRoot(root))
            CheckBlocksPerRank(blocks, nameof(blocks), _peerSize);
        return ScatterPieces<T[]>((starts, counts) =>
            EncodePieces(counts.Length, starts, counts, (w, r) => w.WritePiece(null, blocks![r], 0, blocks[r].Length)), root, h);
    }

    /// <summary>
    /// Scatters consecutive slices of the root's array: rank r gets <paramref name="counts"/>[r]
    /// elements, starting after the slices of ranks 0..r-1. Collective.
    /// </summary>
    /// <remarks>
    /// On an intercommunicator the root (<see cref="Mpi.Root"/>) passes one count per rank of the
    /// other group, which passes the root's rank; the root and the rest of its group
    /// (<see cref="Mpi.ProcNull"/>) get null.
    /// </remarks>
    /// <param name="array">At the root, the elements: exactly the sum of <paramref name="counts"/>; ignored elsewhere (may be null).</param>
    /// <param name="counts">At the root, each rank's slice length; ignored elsewhere (may be null).</param>
    /// <param name="root">Rank that scatters.</param>
    /// <returns>This rank's slice.</returns>
    /// <exception cref="ArgumentException">At the root, counts of the wrong length, negative or not adding up to the array's length (before anything is sent).</exception>
    /// <exception cref="TransportException">At the root, an element may not travel (every rank throws); elsewhere, a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[]? OScatterv<T>(T[]? array, int[]? counts, int root)
    {
        CommHandle h = Handle;
        CheckRoot(root);
        if (_isInter && root == Mpi.ProcNull)
            return null;
        if (IsRoot(root))
        {
            if (array is null)
                throw new ArgumentNullException(nameof(array), SR.Format(SR.BufferRequiredAtRoot, nameof(array)));
            long total = CheckObjectCounts(counts!, nameof(counts), _peerSize);
            if (array.Length != total)
                throw new ArgumentException(SR.Format(SR.ObjectCountsTotal, nameof(array), array.Length, nameof(counts), total), nameof(array));
        }
        return ScatterPieces<T[]>((starts, sizes) => EncodeSlices(array!, sizes.Length, starts, sizes, r => counts![r]), root, h);
    }

    /// <summary>
    /// Collects every rank's block at the root, each kept apart (blocks of any lengths): the
    /// object form of Gatherv. Collective.
    /// </summary>
    /// <remarks>
    /// On an intercommunicator the root (<see cref="Mpi.Root"/>) collects the blocks of every rank
    /// of the other group, which passes the root's rank; the root's own <paramref name="block"/> is
    /// ignored, and the rest of its group passes <see cref="Mpi.ProcNull"/> and gets null.
    /// </remarks>
    /// <param name="block">This rank's elements.</param>
    /// <param name="root">Rank that collects.</param>
    /// <returns>At the root, one array per rank in rank order; null elsewhere.</returns>
    /// <exception cref="TransportException">A block's element may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[][]? OGatherv<T>(T[] block, int root)
    {
        CommHandle h = Handle;
        return GathersNothing(block, root) ? null : GatherBlocks(block, root, h);
    }

    /// <summary>
    /// Every rank sends <paramref name="values"/>[j] to rank j and gets, in element i of the
    /// result, the object rank i sent it (MPI_Alltoall of objects).  Each object travels as its
    /// own payload. Collective; intracommunicators only.
    /// </summary>
    /// <param name="values">One object per rank.</param>
    /// <returns>One object per rank, from each rank in rank order.</returns>
    /// <exception cref="ArgumentException"><paramref name="values"/> has not one element per rank (before anything is sent).</exception>
    /// <exception cref="TransportException">An object may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T?[] OAlltoall<T>(T[] values)
    {
        CommHandle h = Handle;
        RequireIntra("OAlltoall");
        ArgumentNullException.ThrowIfNull(values);
        if (values.Length != _size)
            throw new ArgumentException(SR.Format(SR.ObjectBlocksLength, nameof(values), values.Length, _size), nameof(values));
        return ExchangePieces<T>((w, r) => w.WritePiece(values[r]), h);
    }

    /// <summary>
    /// Every rank sends <paramref name="blocks"/>[j] (any length, empty for nothing) to rank j and
    /// gets, in element i of the result, the block rank i sent it (MPI_Alltoallv of objects).
    /// Each block travels as its own payload. Collective; intracommunicators only.
    /// </summary>
    /// <param name="blocks">One array per rank.</param>
    /// <returns>One array per rank, from each rank in rank order.</returns>
    /// <exception cref="ArgumentException">Not one block per rank, or a null block (before anything is sent).</exception>
    /// <exception cref="TransportException">An element may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[][] OAlltoallv<T>(T[][] blocks)
    {
        CommHandle h = Handle;
        RequireIntra("OAlltoallv");
        ArgumentNullException.ThrowIfNull(blocks);
        CheckBlocksPerRank(blocks, nameof(blocks), _size);
        return ExchangePieces<T[]>((w, r) => w.WritePiece(null, blocks[r], 0, blocks[r].Length), h)!;
    }

    // ---- machinery ----

    private static void CheckBlocksPerRank<T>(T[][]? blocks, string name, int p)
    {
        if (blocks is null)
            throw new ArgumentNullException(name, SR.Format(SR.BufferRequiredAtRoot, name));
        if (blocks.Length != p)
            throw new ArgumentException(SR.Format(SR.ObjectBlocksLength, name, blocks.Length, p), name);
        for (int r = 0; r < p; r++)
            if (blocks[r] is null)
                throw new ArgumentException(SR.Format(SR.ObjectNullBlock, name, r), name);
    }

    /// <summary>
    /// The all-to-all exchange of payloads: payload j (written by <paramref name="write"/>) goes
    /// to rank j.  The sizes go first by Alltoall (a rank that could not encode sends -1 to every
    /// rank, so every rank learns of it), then one Allreduce gives every rank the same round plan
    /// (the largest payload and the most bytes any rank sends or receives), then Alltoallv of bytes.
    /// </summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private TOut?[] ExchangePieces<TOut>(Func<ObjectWriter, int, long> write, CommHandle h)
    {
        int p = _size;
        var sendCounts = new long[p];
        var sendStarts = new long[p];
        NativeBuffer? pieces = null;
        TransportException? failure = null;
        try
        {
            pieces = EncodePieces(p, sendStarts, sendCounts, write);
        }
        catch (TransportException e)
        {
            failure = e;
            Array.Fill(sendCounts, EncodeFailedMarker);
        }
        try
        {
            var recvCounts = new long[p];
            Alltoall(sendCounts, recvCounts);
            if (failure is not null)
                Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
            for (int r = 0; r < p; r++)
                if (recvCounts[r] < 0)
                    throw new TransportException(SR.Format(SR.RankEncodeFailed, r));
            long sent = RoundPlan.Sum(sendCounts), received = RoundPlan.Sum(recvCounts);
            long[] extent = [Math.Max(sent, received), RoundPlan.Max(sendCounts)];
            long[] job = new long[2];
            Allreduce(extent, job, Op.Max);
            var plan = new RoundPlan(job[0], job[1], p);
            var recvStarts = new long[p];
            for (int r = 1; r < p; r++)
                recvStarts[r] = recvStarts[r - 1] + recvCounts[r - 1];
            NativeBuffer all = BufferPool.Rent(received);
            try
            {
                for (int k = 0; k < plan.Rounds; k++)
                    AlltoallvRound(plan, k, pieces!.Pointer, sendStarts, sendCounts, all.Pointer, recvStarts, recvCounts, h);
                var result = new TOut?[p];
                for (int r = 0; r < p; r++)
                    result[r] = Expect<TOut>(PayloadChannel.Decode(all.Pointer + recvStarts[r], recvCounts[r]));
                return result;
            }
            finally
            {
                BufferPool.Return(all);
            }
        }
        finally
        {
            if (pieces is not null)
                BufferPool.Return(pieces);
        }
    }
}
