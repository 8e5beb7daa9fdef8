using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

// Collective communication (MPI-4.0 chapter 6).  A blocking collective is one
// blocking core call running MPI's blocking form (the GC runs freely while the
// rank waits): MPICH's blocking collectives use tuned shared-memory algorithms
// that posting the nonblocking form and testing it would lose (1.9x at 8-byte
// Allreduce).  User-defined Ops run inside that call.  Every argument is
// checked here, before any native call; no collective takes the same array as its send and
// its receive buffer (CheckDistinct, on every rank: there is no MPI_IN_PLACE form).
public unsafe partial class Communicator
{
    /// <summary>Waits until every rank of the communicator has called it (MPI_Barrier).</summary>
    public void Barrier()
    {
        int h = Handle;
        CollDesc d = default;
        d.Kind = CollKind.Barrier;
        Run(h, &d, false);
    }

    /// <summary>Copies the root's array into the array of every rank (MPI_Bcast).</summary>
    /// <param name="buffer">At the root, the data; elsewhere, where it goes (same length on every rank).</param>
    /// <param name="root">Rank whose data is broadcast.</param>
    public void Bcast<T>(T[] buffer, int root) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        Bcast(buffer.AsSpan(), root);
    }

    /// <summary>Copies the root's span into the span of every rank (MPI_Bcast).</summary>
    /// <param name="buffer">At the root, the data; elsewhere, where it goes.</param>
    /// <param name="root">Rank whose data is broadcast.</param>
    public void Bcast<T>(Span<T> buffer, int root) where T : unmanaged
    {
        int h = Handle;
        CheckRoot(root);
        fixed (T* p = buffer)
        {
            CollDesc d = Desc<T>(CollKind.Bcast, buffer.Length, null, p, root);
            Run(h, &d, false);
        }
    }

    /// <summary>Returns the root's value on every rank (MPI_Bcast of one element).</summary>
    /// <param name="value">The value at the root; ignored elsewhere.</param>
    /// <param name="root">Rank whose value is broadcast.</param>
    public T Bcast<T>(T value, int root) where T : unmanaged
    {
        Bcast(new Span<T>(ref value), root);
        return value;
    }

    /// <summary>Replaces <paramref name="value"/> with the root's value on every rank (MPI_Bcast of one element).</summary>
    /// <param name="value">At the root, the value; elsewhere, overwritten with it.</param>
    /// <param name="root">Rank whose value is broadcast.</param>
    public void Bcast<T>(ref T value, int root) where T : unmanaged => Bcast(new Span<T>(ref value), root);

    /// <summary>Combines the arrays of all ranks element by element into the root's <paramref name="recv"/> (MPI_Reduce).</summary>
    /// <param name="send">This rank's contribution (same length on every rank).</param>
    /// <param name="recv">At the root, at least as long as <paramref name="send"/>; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="op">The operation.</param>
    /// <param name="root">Rank that gets the result.</param>
    public void Reduce<T>(T[] send, T[]? recv, Op op, int root) where T : unmanaged
    {
        int h = Handle;
        CheckRoot(root);
        ReductionArgs(send, recv, IsRoot(root));
        Reduction(h, CollKind.Reduce, send, recv, send.Length, op, root);
    }

    /// <summary>Combines one value per rank; the root gets the result, other ranks default (MPI_Reduce).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    /// <param name="root">Rank that gets the result.</param>
    public T Reduce<T>(T value, Op op, int root) where T : unmanaged
    {
        int h = Handle;
        CheckRoot(root);
        T result = default;
        Reduction(h, CollKind.Reduce, &value, &result, 1, op, root);
        return IsRoot(root) ? result : default;
    }

    /// <summary>Combines the arrays of all ranks element by element; every rank gets the result (MPI_Allreduce).</summary>
    /// <param name="send">This rank's contribution (same length on every rank).</param>
    /// <param name="recv">Where the result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">The operation.</param>
    public void Allreduce<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        ReductionArgs(send, recv);
        Reduction(h, CollKind.Allreduce, send, recv, send.Length, op, 0);
    }

    /// <summary>Combines one value per rank; every rank gets the result (MPI_Allreduce).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    public T Allreduce<T>(T value, Op op) where T : unmanaged
    {
        int h = Handle;
        T result = default;
        Reduction(h, CollKind.Allreduce, &value, &result, 1, op, 0);
        return result;
    }

    /// <summary>Inclusive prefix reduction: rank r gets the values of ranks 0..r combined (MPI_Scan).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    public T Scan<T>(T value, Op op) where T : unmanaged
    {
        int h = Handle;
        RequireIntra("Scan");
        T result = default;
        Reduction(h, CollKind.Scan, &value, &result, 1, op, 0);
        return result;
    }

    /// <summary>Inclusive prefix reduction of arrays, element by element (MPI_Scan).</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Where the prefix result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">The operation.</param>
    public void Scan<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        RequireIntra("Scan");
        ReductionArgs(send, recv);
        Reduction(h, CollKind.Scan, send, recv, send.Length, op, 0);
    }

    /// <summary>
    /// Exclusive prefix reduction: rank r gets the values of ranks 0..r-1
    /// combined; rank 0 gets default (MPI_Exscan).
    /// </summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    public T Exscan<T>(T value, Op op) where T : unmanaged
    {
        int h = Handle;
        RequireIntra("Exscan");
        T result = default;
        Reduction(h, CollKind.Exscan, &value, &result, 1, op, 0);
        return _rank == 0 ? default : result;
    }

    /// <summary>
    /// Reduces arrays element by element and scatters the result: rank r gets
    /// block r (<paramref name="recv"/>.Length elements) of it (MPI_Reduce_scatter_block).
    /// </summary>
    /// <remarks>
    /// On an intercommunicator (MPI-4.0 §6.10.2) each group's arrays are reduced and scattered over
    /// the other group; Size is the local group's, and both groups' send lengths must be equal.
    /// </remarks>
    /// <param name="send">This rank's contribution: Size blocks of <paramref name="recv"/>.Length elements.</param>
    /// <param name="recv">This rank's block of the result.</param>
    /// <param name="op">The operation.</param>
    public void ReduceScatterBlock<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        ReduceScatterBlockArgs(send, recv);
        Reduction(h, CollKind.ReduceScatterBlock, send, recv, recv.Length, op, 0);
    }

    /// <summary>
    /// Exclusive prefix reduction of arrays, element by element: rank r gets the
    /// arrays of ranks 0..r-1 combined; rank 0 gets default elements (MPI_Exscan).
    /// </summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Where the prefix result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">The operation.</param>
    public void Exscan<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        RequireIntra("Exscan");
        ReductionArgs(send, recv);
        Reduction(h, CollKind.Exscan, send, recv, send.Length, op, 0);
        if (_rank == 0) // MPI leaves rank 0's result undefined (MPI-4.0 §6.11.2)
            Array.Clear(recv, 0, send.Length);
    }

    /// <summary>
    /// Reduces arrays element by element and scatters blocks of different
    /// lengths: rank r gets <paramref name="counts"/>[r] elements of the result,
    /// starting after the blocks of ranks 0..r-1 (MPI_Reduce_scatter).
    /// </summary>
    /// <remarks>
    /// On an intercommunicator (MPI-4.0 §6.10.1) each group's arrays are reduced and scattered
    /// over the other group: <paramref name="counts"/> has one entry per rank of this rank's
    /// (local) group, the same within the group, and both groups' counts add up to the same total.
    /// </remarks>
    /// <param name="send">This rank's contribution: at least the sum of <paramref name="counts"/> elements.</param>
    /// <param name="recv">This rank's block of the result: at least counts[Rank] elements.</param>
    /// <param name="counts">Each rank's block length (one entry per rank, the same on every rank).</param>
    /// <param name="op">The operation.</param>
    /// <exception cref="ArgumentException">A count is negative, <paramref name="counts"/> has not one entry per rank, or a buffer is too short.</exception>
    public void ReduceScatter<T>(T[] send, T[] recv, int[] counts, Op op) where T : unmanaged
    {
        int h = Handle;
        int mine = ReduceScatterArgs(send, recv, counts);
        ArgumentNullException.ThrowIfNull(op);
        op = op.For<T>();
        fixed (T* s = send)
        fixed (T* r = recv)
        fixed (int* c = counts)
        {
            CollDesc d = Desc<T>(CollKind.ReduceScatter, mine, s, r, 0);
            d.Op = op.CodeFor<T>(nameof(op));
            d.RecvCounts = c;
            Run(h, &d, op.IsUserDefined);
        }
    }

    /// <summary>Returns every rank's value, in rank order (MPI_Allgather of one element).</summary>
    /// <param name="value">This rank's value.</param>
    /// <returns>One value per rank (on an intercommunicator: per rank of the remote group).</returns>
    public T[] Allgather<T>(T value) where T : unmanaged
    {
        int h = Handle;
        var all = new T[_peerSize];
        fixed (T* r = all)
        {
            CollDesc d = Desc<T>(CollKind.Allgather, 1, &value, r, 0);
            Run(h, &d, false);
        }
        return all;
    }

    /// <summary>Collects one value per rank at the root, in rank order (MPI_Gather of one element).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="root">Rank that collects (on an intercommunicator: <see cref="Mpi.Root"/>, <see cref="Mpi.ProcNull"/> or the remote root's rank).</param>
    /// <returns>At the root, the values; null elsewhere.</returns>
    public T[]? Gather<T>(T value, int root) where T : unmanaged
    {
        int h = Handle;
        CheckRoot(root);
        T[]? all = IsRoot(root) ? new T[_peerSize] : null;
        fixed (T* r = all)
        {
            CollDesc d = Desc<T>(CollKind.Gather, 1, &value, r, root);
            Run(h, &d, false);
        }
        return all;
    }

    /// <summary>Sends value r of the root's array to rank r and returns this rank's (MPI_Scatter of one element).</summary>
    /// <param name="values">At the root, one value per rank; ignored elsewhere (may be null).</param>
    /// <param name="root">Rank that scatters.</param>
    /// <returns>This rank's value (default on an intercommunicator's root group).</returns>
    public T Scatter<T>(T[]? values, int root) where T : unmanaged
    {
        int h = Handle;
        CheckRoot(root);
        if (IsRoot(root))
            RequireLength(values, nameof(values), _peerSize);
        T result = default;
        fixed (T* s = values)
        {
            CollDesc d = Desc<T>(CollKind.Scatter, 1, s, &result, root);
            Run(h, &d, false);
        }
        return result;
    }

    /// <summary>Collects every rank's array at the root, in rank order (MPI_Gather).</summary>
    /// <param name="send">This rank's block (same length on every rank).</param>
    /// <param name="recv">At the root, room for Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="root">Rank that collects.</param>
    public void Gather<T>(T[] send, T[]? recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = GatherArgs(send, recv, root);
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            Run(h, &d, false);
        }
    }

    /// <summary>Splits the root's array into Size blocks; rank r gets block r (MPI_Scatter).</summary>
    /// <param name="send">At the root, Size blocks of <paramref name="recv"/>.Length elements; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="recv">This rank's block (same length on every rank).</param>
    /// <param name="root">Rank that scatters.</param>
    public void Scatter<T>(T[]? send, T[] recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = ScatterArgs(send, recv, root);
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            Run(h, &d, false);
        }
    }

    /// <summary>Every rank gets every rank's block, in rank order (MPI_Allgather).</summary>
    /// <param name="send">This rank's block (same length on every rank).</param>
    /// <param name="recv">Room for Size blocks.</param>
    public void Allgather<T>(T[] send, T[] recv) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgatherArgs(send, recv);
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            Run(h, &d, false);
        }
    }

    /// <summary>
    /// Personalized exchange: block j of rank i's <paramref name="send"/> becomes
    /// block i of rank j's <paramref name="recv"/> (MPI_Alltoall).
    /// </summary>
    /// <param name="send">Size equal blocks, one per destination.</param>
    /// <param name="recv">Room for Size blocks of the same length.</param>
    public void Alltoall<T>(T[] send, T[] recv) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallArgs(send, recv);
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            Run(h, &d, false);
        }
    }

    // The v-collectives on an intercommunicator (MPI-4.0 §6.2.2): counts and
    // displacements describe the remote group's blocks, and the root's group
    // passes Mpi.Root (the root) or Mpi.ProcNull (the others) as root.

    /// <summary>Collects blocks of different lengths at the root (MPI_Gatherv).</summary>
    /// <param name="send">This rank's block (ignored, may be null, in an intercommunicator's root group).</param>
    /// <param name="recv">At the root, where the blocks go; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">At the root, each rank's block length (one entry per rank).</param>
    /// <param name="displs">At the root, where each rank's block starts in <paramref name="recv"/>; blocks may not overlap.</param>
    /// <param name="root">Rank that collects.</param>
    public void Gatherv<T>(T[] send, T[]? recv, int[] counts, int[] displs, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = GathervArgs(send, recv, counts, displs, root, out bool atRoot);
        fixed (T* s = send)
        fixed (T* r = recv)
        fixed (int* c = atRoot ? counts : null)
        fixed (int* dp = atRoot ? displs : null)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            d.RecvCounts = c;
            d.RDispls = dp;
            Run(h, &d, false);
        }
    }

    /// <summary>Sends blocks of different lengths from the root; rank r gets counts[r] elements (MPI_Scatterv).</summary>
    /// <param name="send">At the root, the data; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">Each rank's block length (one entry per rank, the same on every rank; on an intercommunicator, the root's names the remote group's ranks).</param>
    /// <param name="displs">At the root, where each block starts in <paramref name="send"/>.</param>
    /// <param name="recv">This rank's block: at least counts[Rank] elements (ignored in an intercommunicator's root group).</param>
    /// <param name="root">Rank that scatters.</param>
    public void Scatterv<T>(T[]? send, int[] counts, int[] displs, T[] recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = ScattervArgs(send, counts, displs, recv, root, out bool atRoot);
        fixed (T* s = send)
        fixed (T* r = recv)
        fixed (int* c = atRoot ? counts : null)
        fixed (int* dp = atRoot ? displs : null)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            d.SendCounts = c;
            d.SDispls = dp;
            Run(h, &d, false);
        }
    }

    /// <summary>Every rank gets every rank's block of its own length (MPI_Allgatherv).</summary>
    /// <param name="send">This rank's block: counts[Rank] elements (on an intracommunicator).</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Each rank's block length (on an intercommunicator: each remote rank's).</param>
    /// <param name="displs">Where each block starts in <paramref name="recv"/>; blocks may not overlap.</param>
    public void Allgatherv<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgathervArgs(send, recv, counts, displs);
        fixed (T* s = send)
        fixed (T* r = recv)
        fixed (int* c = counts)
        fixed (int* dp = displs)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            d.RecvCounts = c;
            d.RDispls = dp;
            Run(h, &d, false);
        }
    }

    /// <summary>Personalized exchange with blocks of different lengths (MPI_Alltoallv).</summary>
    /// <param name="send">The outgoing data.</param>
    /// <param name="sendCounts">Elements for each destination.</param>
    /// <param name="sendDispls">Where each destination's block starts in <paramref name="send"/>.</param>
    /// <param name="recv">Where incoming blocks go.</param>
    /// <param name="recvCounts">Elements from each source.</param>
    /// <param name="recvDispls">Where each source's block starts in <paramref name="recv"/>; blocks may not overlap.</param>
    public void Alltoallv<T>(T[] send, int[] sendCounts, int[] sendDispls,
                             T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
        fixed (T* s = send)
        fixed (T* r = recv)
        fixed (int* sc = sendCounts)
        fixed (int* sd = sendDispls)
        fixed (int* rc = recvCounts)
        fixed (int* rd = recvDispls)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            d.SendCounts = sc;
            d.SDispls = sd;
            d.RecvCounts = rc;
            d.RDispls = rd;
            Run(h, &d, false);
        }
    }

    // ---- nonblocking collectives (MPI-4.0 §6.12): same buffer rules as ISend/IRecv ----

    /// <summary>Starts a barrier (MPI_Ibarrier); it completes once every rank has started it.</summary>
    public Request IBarrier()
    {
        int h = Handle;
        CollDesc d = default;
        d.Kind = CollKind.Barrier;
        return Request.PostCollective<byte>(h, &d, null, null);
    }

    /// <summary>Starts a broadcast of the root's array (MPI_Ibcast).</summary>
    /// <param name="buffer">At the root, the data; elsewhere, where it goes.  Untouchable until completion.</param>
    /// <param name="root">Rank whose data is broadcast.</param>
    public Request IBcast<T>(T[] buffer, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = BcastArgs(buffer, root);
        return Request.PostCollective(h, &d, null, buffer);
    }

    /// <summary>Starts a reduction to the root (MPI_Ireduce).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">At the root, room for the result; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="op">A built-in operation.</param>
    /// <param name="root">Rank that gets the result.</param>
    public Request IReduce<T>(T[] send, T[]? recv, Op op, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = ReduceArgs(send, recv, op, root);
        return Request.PostCollective(h, &d, send, IsRoot(root) ? recv : null);
    }

    /// <summary>Starts an all-reduce (MPI_Iallreduce).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Room for the result.</param>
    /// <param name="op">A built-in operation.</param>
    public Request IAllreduce<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllreduceArgs(send, recv, op);
        return Request.PostCollective(h, &d, send, recv);
    }

    /// <summary>Starts a gather at the root (MPI_Igather).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">At the root, room for Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="root">Rank that collects.</param>
    public Request IGather<T>(T[] send, T[]? recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = GatherArgs(send, recv, root);
        return Request.PostCollective(h, &d, send, IsRoot(root) ? recv : null);
    }

    /// <summary>Starts a scatter from the root (MPI_Iscatter).</summary>
    /// <param name="send">At the root, Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="recv">This rank's block.</param>
    /// <param name="root">Rank that scatters.</param>
    public Request IScatter<T>(T[]? send, T[] recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = ScatterArgs(send, recv, root);
        return Request.PostCollective(h, &d, IsRoot(root) ? send : null, recv);
    }

    /// <summary>Starts an all-gather (MPI_Iallgather).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for Size blocks.</param>
    public Request IAllgather<T>(T[] send, T[] recv) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgatherArgs(send, recv);
        return Request.PostCollective(h, &d, send, recv);
    }

    /// <summary>Starts a personalized exchange (MPI_Ialltoall).</summary>
    /// <param name="send">Size equal blocks, one per destination.</param>
    /// <param name="recv">Room for Size blocks.</param>
    public Request IAlltoall<T>(T[] send, T[] recv) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallArgs(send, recv);
        return Request.PostCollective(h, &d, send, recv);
    }

    /// <summary>Starts an inclusive prefix reduction of arrays (MPI_Iscan).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Room for the result.</param>
    /// <param name="op">A built-in operation.</param>
    public Request IScan<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        RequireIntra("IScan");
        CollDesc d = AllreduceArgs(send, recv, op, CollKind.Scan);
        return Request.PostCollective(h, &d, send, recv);
    }

    /// <summary>
    /// Starts an exclusive prefix reduction of arrays (MPI_Iexscan).  Built-in
    /// operations only.  Rank 0's <paramref name="recv"/> is not defined by MPI
    /// (MPI-4.0 §6.11.2); the blocking <see cref="Exscan{T}(T[], T[], Op)"/> clears it.
    /// </summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Room for the result.</param>
    /// <param name="op">A built-in operation.</param>
    public Request IExscan<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        RequireIntra("IExscan");
        CollDesc d = AllreduceArgs(send, recv, op, CollKind.Exscan);
        return Request.PostCollective(h, &d, send, recv);
    }

    /// <summary>Starts a reduction scattered in equal blocks (MPI_Ireduce_scatter_block).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution: Size blocks of <paramref name="recv"/>.Length elements.</param>
    /// <param name="recv">This rank's block of the result.</param>
    /// <param name="op">A built-in operation.</param>
    public Request IReduceScatterBlock<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        ReduceScatterBlockArgs(send, recv);
        CollDesc d = Desc<T>(CollKind.ReduceScatterBlock, recv.Length, null, null, 0);
        d.Op = NonblockingOp<T>(op);
        return Request.PostCollective(h, &d, send, recv);
    }

    /// <summary>Starts a reduction scattered in blocks of different lengths (MPI_Ireduce_scatter).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution: at least the sum of <paramref name="counts"/> elements.</param>
    /// <param name="recv">This rank's block: at least counts[Rank] elements.</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="op">A built-in operation.</param>
    public Request IReduceScatter<T>(T[] send, T[] recv, int[] counts, Op op) where T : unmanaged
    {
        int h = Handle;
        int mine = ReduceScatterArgs(send, recv, counts);
        CollDesc d = Desc<T>(CollKind.ReduceScatter, mine, null, null, 0);
        d.Op = NonblockingOp<T>(op);
        return PostVector(h, d, send, recv, null, null, counts, null);
    }

    /// <summary>Starts a gather of blocks of different lengths (MPI_Igatherv); arguments as for <see cref="Gatherv"/>.</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">At the root, where the blocks go; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">At the root, each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">At the root, where each block starts in <paramref name="recv"/> (copied).</param>
    /// <param name="root">Rank that collects.</param>
    public Request IGatherv<T>(T[] send, T[]? recv, int[] counts, int[] displs, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = GathervArgs(send, recv, counts, displs, root, out bool atRoot);
        return atRoot ? PostVector(h, d, send, recv, null, null, counts, displs)
                      : PostVector<T>(h, d, send, null, null, null, null, null);
    }

    /// <summary>Starts a scatter of blocks of different lengths (MPI_Iscatterv); arguments as for <see cref="Scatterv"/>.</summary>
    /// <param name="send">At the root, the data; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">At the root, where each block starts in <paramref name="send"/> (copied).</param>
    /// <param name="recv">This rank's block.</param>
    /// <param name="root">Rank that scatters.</param>
    public Request IScatterv<T>(T[]? send, int[] counts, int[] displs, T[] recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = ScattervArgs(send, counts, displs, recv, root, out bool atRoot);
        return atRoot ? PostVector(h, d, send, recv, counts, displs, null, null)
                      : PostVector(h, d, null, recv, null, null, null, null);
    }

    /// <summary>Starts an all-gather of blocks of different lengths (MPI_Iallgatherv); arguments as for <see cref="Allgatherv"/>.</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">Where each block starts in <paramref name="recv"/> (copied).</param>
    public Request IAllgatherv<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgathervArgs(send, recv, counts, displs);
        return PostVector(h, d, send, recv, null, null, counts, displs);
    }

    /// <summary>Starts a personalized exchange of blocks of different lengths (MPI_Ialltoallv); arguments as for <see cref="Alltoallv"/>.</summary>
    /// <param name="send">The outgoing data.</param>
    /// <param name="sendCounts">Elements for each destination (copied: the array may change once this returns).</param>
    /// <param name="sendDispls">Where each destination's block starts in <paramref name="send"/> (copied).</param>
    /// <param name="recv">Where incoming blocks go.</param>
    /// <param name="recvCounts">Elements from each source (copied).</param>
    /// <param name="recvDispls">Where each source's block starts in <paramref name="recv"/> (copied).</param>
    public Request IAlltoallv<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                 T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
        return PostVector(h, d, send, recv, sendCounts, sendDispls, recvCounts, recvDispls);
    }

    /// <summary>Posts a v-collective whose counts and displacements live in a native copy until the core frees the request.</summary>
    private static Request PostVector<T>(int h, CollDesc d, T[]? send, T[]? recv,
                                         int[]? sendCounts, int[]? sendDispls, int[]? recvCounts, int[]? recvDispls) where T : unmanaged
    {
        int* p = VectorCounts.Copy(sendCounts, sendDispls, recvCounts, recvDispls), q = p;
        if (sendCounts is not null)
        {
            d.SendCounts = q;
            q += sendCounts.Length;
        }
        if (sendDispls is not null)
        {
            d.SDispls = q;
            q += sendDispls.Length;
        }
        if (recvCounts is not null)
        {
            d.RecvCounts = q;
            q += recvCounts.Length;
        }
        if (recvDispls is not null)
            d.RDispls = q;
        Request r;
        try
        {
            r = Request.PostCollective(h, &d, send, recv);
        }
        catch
        {
            VectorCounts.Free(p);
            throw;
        }
        VectorCounts.Track(r, p);
        return r;
    }

    // ---- persistent collectives (MPI-4.0 §6.12): made collectively, started collectively ----
    // Every rank makes them in the same order, and starts them in the same order.  They need
    // an MPI-4 library (MPICH 4.0 or later): elsewhere they throw NotSupportedException,
    // naming the library, before anything is sent.  Built-in operations only.

    /// <summary>Makes a persistent barrier (MPI_Barrier_init).</summary>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest BarrierInit()
    {
        int h = Handle;
        CollDesc d = default;
        d.Kind = CollKind.Barrier;
        return PersistentRequest.InitCollective<byte>(h, d, null, 0, null, 0, false, false);
    }

    /// <summary>Makes a persistent broadcast of the root's array (MPI_Bcast_init).</summary>
    /// <param name="buffer">At the root, the data each instance sends; elsewhere, where it goes.</param>
    /// <param name="root">Rank whose data is broadcast.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest BcastInit<T>(T[] buffer, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = BcastArgs(buffer, root);
        bool sends = IsRoot(root), receives = !sends && root != Mpi.ProcNull;
        return PersistentRequest.InitCollective<T>(h, d, null, 0, buffer, buffer.Length, sends, receives);
    }

    /// <summary>Makes a persistent reduction to the root (MPI_Reduce_init).</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">At the root, room for the result; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="op">A built-in operation.</param>
    /// <param name="root">Rank that gets the result.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ReduceInit<T>(T[] send, T[]? recv, Op op, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = ReduceArgs(send, recv, op, root);
        bool atRoot = IsRoot(root);
        return PersistentRequest.InitCollective(h, d, send, send.Length, atRoot ? recv : null, send.Length, false, atRoot);
    }

    /// <summary>Makes a persistent all-reduce (MPI_Allreduce_init).</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Where each instance's result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AllreduceInit<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllreduceArgs(send, recv, op);
        return PersistentRequest.InitCollective(h, d, send, send.Length, recv, send.Length, false, true);
    }

    /// <summary>Makes a persistent gather at the root (MPI_Gather_init).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">At the root, room for Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="root">Rank that collects.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest GatherInit<T>(T[] send, T[]? recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = GatherArgs(send, recv, root);
        bool atRoot = IsRoot(root);
        return PersistentRequest.InitCollective(h, d, send, send.Length, atRoot ? recv : null,
                                                (long)send.Length * _peerSize, false, atRoot);
    }

    /// <summary>Makes a persistent scatter from the root (MPI_Scatter_init).</summary>
    /// <param name="send">At the root, Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="recv">This rank's block.</param>
    /// <param name="root">Rank that scatters.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ScatterInit<T>(T[]? send, T[] recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = ScatterArgs(send, recv, root);
        bool atRoot = IsRoot(root), receives = !_isInter || (root != Mpi.Root && root != Mpi.ProcNull);
        return PersistentRequest.InitCollective(h, d, atRoot ? send : null, (long)recv.Length * _peerSize,
                                                recv, recv.Length, false, receives);
    }

    /// <summary>Makes a persistent all-gather (MPI_Allgather_init).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for Size blocks.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AllgatherInit<T>(T[] send, T[] recv) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgatherArgs(send, recv);
        return PersistentRequest.InitCollective(h, d, send, send.Length, recv, (long)send.Length * _peerSize, false, true);
    }

    /// <summary>Makes a persistent personalized exchange (MPI_Alltoall_init).</summary>
    /// <param name="send">Size equal blocks, one per destination.</param>
    /// <param name="recv">Room for Size blocks.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AlltoallInit<T>(T[] send, T[] recv) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallArgs(send, recv);
        return PersistentRequest.InitCollective(h, d, send, send.Length, recv, send.Length, false, true);
    }

    /// <summary>Makes a persistent inclusive prefix reduction (MPI_Scan_init).</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Where each instance's result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ScanInit<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        RequireIntra("ScanInit");
        CollDesc d = AllreduceArgs(send, recv, op, CollKind.Scan);
        return PersistentRequest.InitCollective(h, d, send, send.Length, recv, send.Length, false, true);
    }

    /// <summary>
    /// Makes a persistent exclusive prefix reduction (MPI_Exscan_init).  MPI leaves
    /// rank 0's result undefined (MPI-4.0 §6.11.2): there <paramref name="recv"/> keeps what it held.
    /// </summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Where each instance's result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ExscanInit<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        RequireIntra("ExscanInit");
        CollDesc d = AllreduceArgs(send, recv, op, CollKind.Exscan);
        return PersistentRequest.InitCollective(h, d, send, send.Length, recv, send.Length, _rank == 0, true);
    }

    /// <summary>Makes a persistent reduction scattered in equal blocks (MPI_Reduce_scatter_block_init).</summary>
    /// <param name="send">This rank's contribution: Size blocks of <paramref name="recv"/>.Length elements.</param>
    /// <param name="recv">This rank's block of each instance's result.</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ReduceScatterBlockInit<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        int h = Handle;
        ReduceScatterBlockArgs(send, recv);
        CollDesc d = Desc<T>(CollKind.ReduceScatterBlock, recv.Length, null, null, 0);
        d.Op = NonblockingOp<T>(op);
        return PersistentRequest.InitCollective(h, d, send, (long)recv.Length * _peerSize, recv, recv.Length, false, true);
    }

    /// <summary>Makes a persistent reduction scattered in blocks of different lengths (MPI_Reduce_scatter_init).</summary>
    /// <param name="send">This rank's contribution: at least the sum of <paramref name="counts"/> elements.</param>
    /// <param name="recv">This rank's block: at least counts[Rank] elements.</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ReduceScatterInit<T>(T[] send, T[] recv, int[] counts, Op op) where T : unmanaged
    {
        int h = Handle;
        int mine = ReduceScatterArgs(send, recv, counts);
        CollDesc d = Desc<T>(CollKind.ReduceScatter, mine, null, null, 0);
        d.Op = NonblockingOp<T>(op);
        long total = 0;
        foreach (int c in counts)
            total += c;
        fixed (int* c = counts)
        {
            d.RecvCounts = c;
            return PersistentRequest.InitCollective(h, d, send, total, recv, mine, false, true);
        }
    }

    /// <summary>Makes a persistent gather of blocks of different lengths (MPI_Gatherv_init); arguments as for <see cref="Gatherv"/>.</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">At the root, where the blocks go; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">At the root, each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">At the root, where each block starts in <paramref name="recv"/> (copied).</param>
    /// <param name="root">Rank that collects.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest GathervInit<T>(T[] send, T[]? recv, int[] counts, int[] displs, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = GathervArgs(send, recv, counts, displs, root, out bool atRoot);
        if (!atRoot)
            return PersistentRequest.InitCollective<T>(h, d, send, d.Count, null, 0, false, false);
        fixed (int* c = counts)
        fixed (int* o = displs)
        {
            d.RecvCounts = c;
            d.RDispls = o;
            // The whole extent is staged both ways: the gaps between blocks keep their contents.
            return PersistentRequest.InitCollective(h, d, send, d.Count, recv, Extent(counts, displs), true, true);
        }
    }

    /// <summary>Makes a persistent scatter of blocks of different lengths (MPI_Scatterv_init); arguments as for <see cref="Scatterv"/>.</summary>
    /// <param name="send">At the root, the data; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">At the root, where each block starts in <paramref name="send"/> (copied).</param>
    /// <param name="recv">This rank's block.</param>
    /// <param name="root">Rank that scatters.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ScattervInit<T>(T[]? send, int[] counts, int[] displs, T[] recv, int root) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = ScattervArgs(send, counts, displs, recv, root, out bool atRoot);
        bool receives = !_isInter || (root != Mpi.Root && root != Mpi.ProcNull);
        if (!atRoot)
            return PersistentRequest.InitCollective<T>(h, d, null, 0, receives ? recv : null, d.Count, false, receives);
        fixed (int* c = counts)
        fixed (int* o = displs)
        {
            d.SendCounts = c;
            d.SDispls = o;
            return PersistentRequest.InitCollective(h, d, send, Extent(counts, displs), receives ? recv : null, d.Count, false, receives);
        }
    }

    /// <summary>Makes a persistent all-gather of blocks of different lengths (MPI_Allgatherv_init); arguments as for <see cref="Allgatherv"/>.</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">Where each block starts in <paramref name="recv"/> (copied).</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AllgathervInit<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgathervArgs(send, recv, counts, displs);
        fixed (int* c = counts)
        fixed (int* o = displs)
        {
            d.RecvCounts = c;
            d.RDispls = o;
            return PersistentRequest.InitCollective(h, d, send, send.Length, recv, Extent(counts, displs), true, true);
        }
    }

    /// <summary>Makes a persistent personalized exchange of blocks of different lengths (MPI_Alltoallv_init); arguments as for <see cref="Alltoallv"/>.</summary>
    /// <param name="send">The outgoing data.</param>
    /// <param name="sendCounts">Elements for each destination (copied: the array may change once this returns).</param>
    /// <param name="sendDispls">Where each destination's block starts in <paramref name="send"/> (copied).</param>
    /// <param name="recv">Where incoming blocks go.</param>
    /// <param name="recvCounts">Elements from each source (copied).</param>
    /// <param name="recvDispls">Where each source's block starts in <paramref name="recv"/> (copied).</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AlltoallvInit<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                              T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
        fixed (int* sc = sendCounts)
        fixed (int* so = sendDispls)
        fixed (int* rc = recvCounts)
        fixed (int* ro = recvDispls)
        {
            d.SendCounts = sc;
            d.SDispls = so;
            d.RecvCounts = rc;
            d.RDispls = ro;
            return PersistentRequest.InitCollective(h, d, send, Extent(sendCounts, sendDispls),
                                                    recv, Extent(recvCounts, recvDispls), true, true);
        }
    }

    /// <summary>Elements from the start of a buffer to the end of its last block (counts and displacements already checked).</summary>
    private static long Extent(int[] counts, int[] displs)
    {
        long end = 0;
        for (int i = 0; i < counts.Length; i++)
            if (counts[i] > 0)
                end = Math.Max(end, (long)displs[i] + counts[i]);
        return end;
    }

    // ---- the checked arguments of the nonblocking and persistent forms ----

    private CollDesc BcastArgs<T>(T[] buffer, int root) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        CheckRoot(root);
        return Desc<T>(CollKind.Bcast, buffer.Length, null, null, root);
    }

    private CollDesc ReduceArgs<T>(T[] send, T[]? recv, Op op, int root) where T : unmanaged
    {
        CheckRoot(root);
        ReductionArgs(send, recv, IsRoot(root));
        CollDesc d = Desc<T>(CollKind.Reduce, send.Length, null, null, root);
        d.Op = NonblockingOp<T>(op);
        return d;
    }

    private static CollDesc AllreduceArgs<T>(T[] send, T[] recv, Op op, int kind = CollKind.Allreduce) where T : unmanaged
    {
        ReductionArgs(send, recv);
        CollDesc d = Desc<T>(kind, send.Length, null, null, 0);
        d.Op = NonblockingOp<T>(op);
        return d;
    }

    private CollDesc GatherArgs<T>(T[] send, T[]? recv, int root) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        CheckRoot(root);
        if (IsRoot(root))
            RequireLength(recv, nameof(recv), (long)send.Length * _peerSize);
        return Desc<T>(CollKind.Gather, send.Length, null, null, root);
    }

    private CollDesc ScatterArgs<T>(T[]? send, T[] recv, int root) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        CheckRoot(root);
        if (IsRoot(root))
            RequireLength(send, nameof(send), (long)recv.Length * _peerSize);
        return Desc<T>(CollKind.Scatter, recv.Length, null, null, root);
    }

    private CollDesc AllgatherArgs<T>(T[] send, T[] recv) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        RequireLength(recv, nameof(recv), (long)send.Length * _peerSize);
        return Desc<T>(CollKind.Allgather, send.Length, null, null, 0);
    }

    private CollDesc AlltoallArgs<T>(T[] send, T[] recv) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (send.Length % _peerSize != 0)
            throw new ArgumentException(SR.Format(SR.LengthNotMultiple, nameof(send), send.Length, _peerSize), nameof(send));
        RequireLength(recv, nameof(recv), send.Length);
        return Desc<T>(CollKind.Alltoall, send.Length / _peerSize, null, null, 0);
    }

    private CollDesc GathervArgs<T>(T[]? send, T[]? recv, int[] counts, int[] displs, int root, out bool atRoot) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        CheckRoot(root);
        atRoot = IsRoot(root);
        bool sends = !_isInter || (root != Mpi.Root && root != Mpi.ProcNull);
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
        return Desc<T>(CollKind.Gatherv, sends ? send!.Length : 0, null, null, root);
    }

    private CollDesc ScattervArgs<T>(T[]? send, int[] counts, int[] displs, T[]? recv, int root, out bool atRoot) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        CheckRoot(root);
        atRoot = IsRoot(root);
        bool receives = !_isInter || (root != Mpi.Root && root != Mpi.ProcNull);
        if (atRoot)
        {
            if (send is null)
                throw new ArgumentNullException(nameof(send), SR.Format(SR.BufferRequiredAtRoot, nameof(send)));
            CheckBlocks(counts, nameof(counts), displs, nameof(displs), send.Length, nameof(send), noOverlap: false);
        }
        if (!receives)
            return Desc<T>(CollKind.Scatterv, 0, null, null, root);
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        if (counts is null)
            ThrowHelper.ThrowNull(nameof(counts));
        if (counts.Length != _size)
            throw new ArgumentException(SR.Format(SR.CountsLength, nameof(counts), counts.Length, _size), nameof(counts));
        int mine = counts[_rank];
        if (mine < 0)
            throw new ArgumentException(SR.Format(SR.NegativeEntry, nameof(counts), _rank, mine), nameof(counts));
        RequireLength(recv, nameof(recv), mine);
        return Desc<T>(CollKind.Scatterv, mine, null, null, root);
    }

    private CollDesc AllgathervArgs<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        CheckBlocks(counts, nameof(counts), displs, nameof(displs), recv.Length, nameof(recv), noOverlap: true);
        if (!_isInter) // on an intercommunicator the counts are the remote group's
            CheckOwnCount(send.Length, nameof(send), counts, nameof(counts));
        return Desc<T>(CollKind.Allgatherv, send.Length, null, null, 0);
    }

    private CollDesc AlltoallvArgs<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                      T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        CheckBlocks(sendCounts, nameof(sendCounts), sendDispls, nameof(sendDispls), send.Length, nameof(send), noOverlap: false);
        CheckBlocks(recvCounts, nameof(recvCounts), recvDispls, nameof(recvDispls), recv.Length, nameof(recv), noOverlap: true);
        return Desc<T>(CollKind.Alltoallv, 0, null, null, 0);
    }

    // On an intercommunicator (MPI-4.0 §6.10.1-2) each group reduces the other group's data and
    // scatters it over its own ranks: counts and send lengths are of the local group.
    private void ReduceScatterBlockArgs<T>(T[] send, T[] recv)
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        RequireLength(send, nameof(send), (long)recv.Length * _size);
    }

    /// <summary>Checks ReduceScatter's arguments; returns this rank's count.</summary>
    private int ReduceScatterArgs<T>(T[] send, T[] recv, int[] counts) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (counts is null)
            ThrowHelper.ThrowNull(nameof(counts));
        if (counts.Length != _size)
            throw new ArgumentException(SR.Format(SR.CountsLength, nameof(counts), counts.Length, _size), nameof(counts));
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
        return counts[_rank];
    }

    // ---- shared machinery ----

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private protected static CollDesc Desc<T>(int kind, long count, void* send, void* recv, int root) where T : unmanaged
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

    private void Reduction<T>(int h, int kind, T[] send, T[]? recv, long count, Op op, int root) where T : unmanaged
    {
        fixed (T* s = send)
        fixed (T* r = recv)
            Reduction(h, kind, s, r, count, op, root);
    }

    private static void Reduction<T>(int h, int kind, T* send, T* recv, long count, Op op, int root) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(op);
        op = op.For<T>();
        CollDesc d = Desc<T>(kind, count, send, recv, root);
        d.Op = op.CodeFor<T>(nameof(op));
        Run(h, &d, op.IsUserDefined);
    }

    private static int NonblockingOp<T>(Op op) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(op);
        op = op.For<T>();
        if (op.IsUserDefined)
            throw new ArgumentException(SR.NonblockingUserOp, nameof(op));
        return op.CodeFor<T>(nameof(op));
    }

    private static void Run(int h, CollDesc* d, bool userOp)
    {
        int rc = HangReport.Enabled ? HangReport.Collective(h, d) : Core.CollRun(h, d);
        if (userOp)
            Op.EndCollective(rc); // also when MPI failed: what the operation threw is taken either way
        else if (rc < 0)
            ThrowHelper.ThrowCore(rc);
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

    private bool IsRoot(int root) => _isInter ? root == Mpi.Root : _rank == root;

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
