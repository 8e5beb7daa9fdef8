using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

// The checked arguments of the collectives: each method checks what its blocking, nonblocking and
// persistent forms take, in the same order, and describes the call (Collective<T>), before any
// native call.  No collective takes the same array as its send and its receive buffer
// (CheckDistinct, on every rank: there is no MPI_IN_PLACE form).
public unsafe partial class Communicator
{
    private Collective<T> BcastArgs<T>(T[] buffer, int root) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        CheckRoot(root);
        return new(CollKind.Bcast, buffer.Length, root, null, buffer);
    }

    // The reductions take user-defined operations in their blocking forms only (Collective<T>.Reduce).

    private Collective<T> ReduceArgs<T>(T[] send, T[]? recv, int root, Op op, bool blocking) where T : unmanaged
    {
        CheckRoot(root);
        bool atRoot = IsRoot(root);
        ReductionArgs(send, recv, atRoot);
        Collective<T> c = new(CollKind.Reduce, send.Length, root, send, recv, receives: atRoot);
        c.Reduce(op, blocking);
        return c;
    }

    /// <summary>
    /// The arguments of Allreduce and of the prefix reductions Scan and Exscan (<paramref name="kind"/>),
    /// which an intercommunicator refuses, naming the method <paramref name="intraOnly"/>.
    /// </summary>
    private Collective<T> AllreduceArgs<T>(T[] send, T[] recv, Op op, bool blocking, int kind = CollKind.Allreduce,
                                           string? intraOnly = null) where T : unmanaged
    {
        if (intraOnly is not null)
            RequireIntra(intraOnly);
        ReductionArgs(send, recv);
        Collective<T> c = new(kind, send.Length, 0, send, recv);
        c.Reduce(op, blocking);
        return c;
    }

    private Collective<T> GatherArgs<T>(T[] send, T[]? recv, int root) where T : unmanaged =>
        RootedArgs(CollKind.Gather, send, recv, root);

    private Collective<T> ScatterArgs<T>(T[]? send, T[] recv, int root) where T : unmanaged =>
        RootedArgs(CollKind.Scatter, send, recv, root);

    /// <summary>
    /// A gather (every rank's block, send, into the root's recv) or its mirror image, a scatter
    /// (the root's send into every rank's block, recv): the root's array holds Size blocks.
    /// </summary>
    private Collective<T> RootedArgs<T>(int kind, T[]? send, T[]? recv, int root) where T : unmanaged
    {
        bool gather = kind == CollKind.Gather;
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        T[]? block = gather ? send : recv;
        if (block is null)
            ThrowHelper.ThrowNull(gather ? nameof(send) : nameof(recv));
        CheckRoot(root);
        bool atRoot = IsRoot(root);
        if (atRoot)
            RequireLength(gather ? recv : send, gather ? nameof(recv) : nameof(send), (long)block.Length * _peerSize);
        return new(kind, block.Length, root, send, recv, sends: atRoot || gather, receives: atRoot || !gather);
    }

    private Collective<T> AllgatherArgs<T>(T[] send, T[] recv) where T : unmanaged =>
        AllgatherArgs(CollKind.Allgather, _peerSize, send, recv);

    /// <summary>An all-gather of <paramref name="blocks"/> blocks (ranks, or a topology's sources).</summary>
    private protected static Collective<T> AllgatherArgs<T>(int kind, int blocks, T[] send, T[] recv, bool neighbor = false)
        where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        RequireLength(recv, nameof(recv), (long)send.Length * blocks);
        return new(kind, send.Length, 0, send, recv) { Neighbor = neighbor };
    }

    private Collective<T> AlltoallArgs<T>(T[] send, T[] recv) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (send.Length % _peerSize != 0)
            throw new ArgumentException(SR.Format(SR.LengthNotMultiple, nameof(send), send.Length, _peerSize), nameof(send));
        RequireLength(recv, nameof(recv), send.Length);
        return new(CollKind.Alltoall, send.Length / _peerSize, 0, send, recv);
    }

    private Collective<T> GathervArgs<T>(T[]? send, T[]? recv, int[] counts, int[] displs, int root) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        CheckRoot(root);
        bool atRoot = IsRoot(root), sends = OutsideRootGroup(root);
        if (sends && send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (atRoot)
        {
            if (recv is null)
                throw new ArgumentNullException(nameof(recv), SR.Format(SR.BufferRequiredAtRoot, nameof(recv)));
            CheckBlocks(counts, nameof(counts), displs, nameof(displs), recv.Length, nameof(recv), noOverlap: true);
            if (!_isInter)
                CheckOwnCount(send!.Length, nameof(send), counts, nameof(counts));
        }
        Collective<T> c = new(CollKind.Gatherv, sends ? send!.Length : 0, root, send, recv, receives: atRoot);
        if (atRoot)
        {
            c.RecvCounts = counts;
            c.RecvDispls = displs;
        }
        return c;
    }

    private Collective<T> ScattervArgs<T>(T[]? send, int[] counts, int[] displs, T[]? recv, int root) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        CheckRoot(root);
        bool atRoot = IsRoot(root), receives = OutsideRootGroup(root);
        if (atRoot)
        {
            if (send is null)
                throw new ArgumentNullException(nameof(send), SR.Format(SR.BufferRequiredAtRoot, nameof(send)));
            CheckBlocks(counts, nameof(counts), displs, nameof(displs), send.Length, nameof(send), noOverlap: false);
        }
        Collective<T> c = new(CollKind.Scatterv, 0, root, send, recv, sends: atRoot, receives: receives);
        if (atRoot)
        {
            c.SendCounts = counts;
            c.SendDispls = displs;
        }
        if (!receives)
            return c;
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        CheckLocalCounts(counts);
        int mine = counts[_rank];
        if (mine < 0)
            throw new ArgumentException(SR.Format(SR.NegativeEntry, nameof(counts), _rank, mine), nameof(counts));
        RequireLength(recv, nameof(recv), mine);
        c.Desc.Count = mine;
        return c;
    }

    // On an intercommunicator the counts are the remote group's: only an intracommunicator's
    // own entry must match the send length.
    private Collective<T> AllgathervArgs<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged =>
        AllgathervArgs(CollKind.Allgatherv, _peerSize, SR.CountsLength, send, recv, counts, displs, ownCount: !_isInter);

    /// <summary>
    /// An all-gather of blocks of different lengths: <paramref name="blocks"/> entries of counts and
    /// displacements (<paramref name="lengthMessage"/> when they are not), one per rank or source.
    /// </summary>
    private protected Collective<T> AllgathervArgs<T>(int kind, int blocks, string lengthMessage, T[] send, T[] recv,
                                                      int[] counts, int[] displs, bool ownCount, bool neighbor = false)
        where T : unmanaged
    {
        CheckPair(send, recv);
        CheckBlocks(blocks, lengthMessage, counts, nameof(counts), displs, nameof(displs), 1, recv.Length, nameof(recv), noOverlap: true);
        if (ownCount)
            CheckOwnCount(send.Length, nameof(send), counts, nameof(counts));
        return new(kind, send.Length, 0, send, recv) { RecvCounts = counts, RecvDispls = displs, Neighbor = neighbor };
    }

    private Collective<T> AlltoallvArgs<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                           T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged =>
        AlltoallvArgs(CollKind.Alltoallv, _peerSize, _peerSize, SR.CountsLength,
                      send, sendCounts, sendDispls, recv, recvCounts, recvDispls);

    /// <summary>
    /// A personalized exchange of blocks of different lengths: <paramref name="sendBlocks"/> and
    /// <paramref name="recvBlocks"/> entries (ranks, or a topology's destinations and sources).
    /// </summary>
    private protected static Collective<T> AlltoallvArgs<T>(int kind, int sendBlocks, int recvBlocks, string lengthMessage,
                                                            T[] send, int[] sendCounts, int[] sendDispls,
                                                            T[] recv, int[] recvCounts, int[] recvDispls, bool neighbor = false)
        where T : unmanaged
    {
        CheckPair(send, recv);
        CheckBlocks(sendBlocks, lengthMessage, sendCounts, nameof(sendCounts), sendDispls, nameof(sendDispls), 1,
                    send.Length, nameof(send), noOverlap: false);
        CheckBlocks(recvBlocks, lengthMessage, recvCounts, nameof(recvCounts), recvDispls, nameof(recvDispls), 1,
                    recv.Length, nameof(recv), noOverlap: true);
        return new(kind, 0, 0, send, recv)
        {
            SendCounts = sendCounts,
            SendDispls = sendDispls,
            RecvCounts = recvCounts,
            RecvDispls = recvDispls,
            Neighbor = neighbor,
        };
    }

    // On an intercommunicator (MPI-4.0 §6.10.1-2) each group reduces the other group's data and
    // scatters it over its own ranks: counts and send lengths are of the local group.
    private Collective<T> ReduceScatterBlockArgs<T>(T[] send, T[] recv, Op op, bool blocking) where T : unmanaged
    {
        CheckPair(send, recv);
        RequireLength(send, nameof(send), (long)recv.Length * _size);
        Collective<T> c = new(CollKind.ReduceScatterBlock, recv.Length, 0, send, recv);
        c.Reduce(op, blocking);
        return c;
    }

    private Collective<T> ReduceScatterArgs<T>(T[] send, T[] recv, int[] counts, Op op, bool blocking) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        CheckLocalCounts(counts);
        long total = 0;
        for (int i = 0; i < counts.Length; i++)
        {
            if (counts[i] < 0)
                throw new ArgumentException(SR.Format(SR.NegativeEntry, nameof(counts), i, counts[i]), nameof(counts));
            total += counts[i];
        }
        if (send.Length < total)
            throw new ArgumentException(SR.Format(SR.CountsPastBuffer, nameof(send), send.Length, nameof(counts), total), nameof(send));
        RequireLength(recv, nameof(recv), counts[_rank]);
        Collective<T> c = new(CollKind.ReduceScatter, counts[_rank], 0, send, recv) { RecvCounts = counts };
        c.Reduce(op, blocking);
        return c;
    }

    // ---- shared checks ----

    /// <summary>The descriptor of a collective over elements of T; the operation and the count arrays are set by the caller.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static CollDesc Desc<T>(int kind, long count, void* send, void* recv, int root) where T : unmanaged
    {
        CollDesc d = default;
        d.Kind = kind;
        d.Root = root;
        d.DType = ElementType<T>.Code;
        d.ElemSize = sizeof(T);
        d.Count = count;
        d.SendBuf = send;
        d.RecvBuf = recv;
        return d;
    }

    /// <summary>Checks a reduction's arrays: where this rank receives, recv as long as send; never the same array.</summary>
    private static void ReductionArgs<T>(T[] send, T[]? recv, bool receives = true)
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (receives)
            RequireLength(recv, nameof(recv), send.Length);
    }

    /// <summary>A blocking reduction of one value per rank; returns this rank's result.</summary>
    private static T Reduction<T>(CommHandle h, int kind, T value, Op op, int root) where T : unmanaged
    {
        T result = default;
        Collective<T> c = new(kind, 1, root) { Send = new Span<T>(ref value), Recv = new Span<T>(ref result) };
        c.Reduce(op, userAllowed: true);
        c.Run(h);
        return result;
    }

    /// <summary>Runs a blocking collective in the core: the one place a descriptor reaches <c>mp_coll_run</c>.</summary>
    internal static void Run(CommHandle h, CollDesc* d, bool userOp)
    {
        int rc = HangReport.Enabled ? HangReport.Collective(h, d) : Core.CollRun(h, d);
        if (userOp)
            Op.EndCollective(rc); // also when MPI failed: what the operation threw is taken either way
        else
            ThrowHelper.Check(rc);
    }

    /// <summary>
    /// Intracommunicators: root is a rank.  Intercommunicators (MPI-4.0 §6.2.2):
    /// the root passes <see cref="Mpi.Root"/>, the rest of its group
    /// <see cref="Mpi.ProcNull"/>, the other group the root's rank in it.
    /// </summary>
    private void CheckRoot(int root)
    {
        if (_isInter ? root != Mpi.Root && root != Mpi.ProcNull && (uint)root >= (uint)_peerSize
                     : (uint)root >= (uint)_size)
            throw new ArgumentOutOfRangeException(nameof(root), root,
                SR.Format(_isInter ? SR.InterRootOutOfRange : SR.RootOutOfRange, root, _peerSize));
    }

    /// <summary>
    /// The two arrays of a call that uses both on every rank: never one array as both (checked
    /// first: the aliasing, not the lengths it makes inconsistent), neither null.
    /// </summary>
    private protected static void CheckPair<T>([NotNull] T[]? send, [NotNull] T[]? recv)
    {
        CheckDistinct(send, recv);
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
    }

    /// <summary>Counts of this rank's own group, one per rank (Scatterv's receivers, ReduceScatter's blocks).</summary>
    private void CheckLocalCounts([NotNull] int[]? counts)
    {
        if (counts is null)
            ThrowHelper.ThrowNull(nameof(counts));
        if (counts.Length != _size)
            throw new ArgumentException(SR.Format(SR.CountsLength, nameof(counts), counts.Length, _size), nameof(counts));
    }

    private bool IsRoot(int root) => _isInter ? root == Mpi.Root : _rank == root;

    /// <summary>
    /// False in an intercommunicator's root group (root <see cref="Mpi.Root"/> or <see cref="Mpi.ProcNull"/>),
    /// whose ranks neither send to a gather nor receive from a scatter (MPI-4.0 §6.2.2).
    /// </summary>
    private bool OutsideRootGroup(int root) => !_isInter || (root != Mpi.Root && root != Mpi.ProcNull);

    private void RequireIntra(string operation)
    {
        if (_isInter)
            throw new NotSupportedException(SR.Format(SR.IntraOnly, operation));
    }

    private protected static void RequireLength<T>(T[]? buffer, string name, long needed)
    {
        if (buffer is null)
            throw new ArgumentNullException(name, SR.Format(SR.BufferRequiredAtRoot, name));
        if (buffer.Length < needed)
            throw new ArgumentException(SR.Format(SR.BufferTooSmall, name, buffer.Length, needed), name);
    }

    private void CheckOwnCount(int length, string name, int[] counts, string countsName)
    {
        if (counts[_rank] != length)
            throw new ArgumentException(SR.Format(SR.OwnCountMismatch, name, length, countsName, _rank, counts[_rank]), name);
    }

    /// <summary>Checks per-rank blocks (of the remote group on an intercommunicator) against a buffer of <paramref name="length"/> elements.</summary>
    private void CheckBlocks(int[] counts, string countsName, int[] displs, string displsName, int length, string bufferName, bool noOverlap) =>
        CheckBlocks(_peerSize, SR.CountsLength, counts, countsName, displs, displsName, 1, length, bufferName, noOverlap);

    /// <summary>
    /// Checks <paramref name="entries"/> blocks (one per rank or per neighbour) against a buffer of
    /// <paramref name="length"/> units: block i is counts[i] elements of <paramref name="scale"/>
    /// units at displacement displs[i] (in units).
    /// </summary>
    private protected static void CheckBlocks<TDispl>(int entries, string lengthMessage, int[] counts, string countsName,
                                                      TDispl[] displs, string displsName, int scale, long length,
                                                      string bufferName, bool noOverlap)
        where TDispl : unmanaged, Numerics.IBinaryInteger<TDispl>
    {
        if (counts is null)
            ThrowHelper.ThrowNull(countsName);
        if (displs is null)
            ThrowHelper.ThrowNull(displsName);
        if (counts.Length != entries)
            throw new ArgumentException(SR.Format(lengthMessage, countsName, counts.Length, entries), countsName);
        if (displs.Length != entries)
            throw new ArgumentException(SR.Format(lengthMessage, displsName, displs.Length, entries), displsName);
        for (int i = 0; i < entries; i++)
        {
            long displ = long.CreateTruncating(displs[i]);
            if (counts[i] < 0)
                throw new ArgumentException(SR.Format(SR.NegativeEntry, countsName, i, counts[i]), countsName);
            if (displ < 0)
                throw new ArgumentException(SR.Format(SR.NegativeEntry, displsName, i, displ), displsName);
            // Compared without a sum: a byte displacement near long.MaxValue would wrap it below the length.
            if (displ > length || (long)counts[i] * scale > length - displ)
                throw new ArgumentException(SR.Format(SR.BlockPastEnd, i, countsName, counts[i], displ, bufferName, length), displsName);
        }
        if (!noOverlap)
            return;
        // Blocks written by MPI must not overlap: sort the non-empty ones by start.
        var order = new int[entries];
        int n = 0;
        for (int i = 0; i < entries; i++)
            if (counts[i] > 0)
                order[n++] = i;
        Array.Sort(order, 0, n, Collections.Generic.Comparer<int>.Create((a, b) => displs[a].CompareTo(displs[b])));
        for (int k = 1; k < n; k++)
        {
            int prev = order[k - 1], cur = order[k];
            if (long.CreateTruncating(displs[prev]) + (long)counts[prev] * scale > long.CreateTruncating(displs[cur]))
                throw new ArgumentException(SR.Format(SR.BlocksOverlap, Math.Min(prev, cur), Math.Max(prev, cur), bufferName), displsName);
        }
    }
}
