using System.MP.Interop;

namespace System.MP;

// Collective communication (MPI-4.0 chapter 6).  A blocking collective is one
// blocking core call running MPI's blocking form (the GC runs freely while the
// rank waits): MPICH's blocking collectives use tuned shared-memory algorithms
// that posting the nonblocking form and testing it would lose (1.9x at 8-byte
// Allreduce).  User-defined Ops run inside that call.  Every argument is checked
// (Communicator.CollectiveArguments.cs) before any native call; Collective<T> makes the call.
public partial class Communicator
{
    /// <summary>Waits until every rank of the communicator has called it (MPI_Barrier).</summary>
    public void Barrier()
    {
        CommHandle h = Handle;
        new Collective<byte>(CollKind.Barrier, 0, 0).Run(h);
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
        CommHandle h = Handle;
        CheckRoot(root);
        Collective<T> c = new(CollKind.Bcast, buffer.Length, root) { Recv = buffer };
        c.Run(h);
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
        CommHandle h = Handle;
        ReduceArgs(send, recv, root, op, blocking: true).Run(h);
    }

    /// <summary>Combines one value per rank; the root gets the result, other ranks default (MPI_Reduce).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    /// <param name="root">Rank that gets the result.</param>
    public T Reduce<T>(T value, Op op, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckRoot(root);
        T result = Reduction(h, CollKind.Reduce, value, op, root);
        return IsRoot(root) ? result : default;
    }

    /// <summary>Combines the arrays of all ranks element by element; every rank gets the result (MPI_Allreduce).</summary>
    /// <param name="send">This rank's contribution (same length on every rank).</param>
    /// <param name="recv">Where the result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">The operation.</param>
    public void Allreduce<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        AllreduceArgs(send, recv, op, blocking: true).Run(h);
    }

    /// <summary>Combines one value per rank; every rank gets the result (MPI_Allreduce).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    public T Allreduce<T>(T value, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        return Reduction(h, CollKind.Allreduce, value, op, 0);
    }

    /// <summary>Inclusive prefix reduction: rank r gets the values of ranks 0..r combined (MPI_Scan).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    public T Scan<T>(T value, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        RequireIntra("Scan");
        return Reduction(h, CollKind.Scan, value, op, 0);
    }

    /// <summary>Inclusive prefix reduction of arrays, element by element (MPI_Scan).</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Where the prefix result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">The operation.</param>
    public void Scan<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        AllreduceArgs(send, recv, op, blocking: true, CollKind.Scan, "Scan").Run(h);
    }

    /// <summary>
    /// Exclusive prefix reduction: rank r gets the values of ranks 0..r-1
    /// combined; rank 0 gets default (MPI_Exscan).
    /// </summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    public T Exscan<T>(T value, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        RequireIntra("Exscan");
        T result = Reduction(h, CollKind.Exscan, value, op, 0);
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
        CommHandle h = Handle;
        ReduceScatterBlockArgs(send, recv, op, blocking: true).Run(h);
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
        CommHandle h = Handle;
        AllreduceArgs(send, recv, op, blocking: true, CollKind.Exscan, "Exscan").Run(h);
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
        CommHandle h = Handle;
        ReduceScatterArgs(send, recv, counts, op, blocking: true).Run(h);
    }

    /// <summary>Returns every rank's value, in rank order (MPI_Allgather of one element).</summary>
    /// <param name="value">This rank's value.</param>
    /// <returns>One value per rank (on an intercommunicator: per rank of the remote group).</returns>
    public T[] Allgather<T>(T value) where T : unmanaged
    {
        CommHandle h = Handle;
        var all = new T[_peerSize];
        Collective<T> c = new(CollKind.Allgather, 1, 0) { Send = new Span<T>(ref value), Recv = all };
        c.Run(h);
        return all;
    }

    /// <summary>Collects one value per rank at the root, in rank order (MPI_Gather of one element).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="root">Rank that collects (on an intercommunicator: <see cref="Mpi.Root"/>, <see cref="Mpi.ProcNull"/> or the remote root's rank).</param>
    /// <returns>At the root, the values; null elsewhere.</returns>
    public T[]? Gather<T>(T value, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckRoot(root);
        T[]? all = IsRoot(root) ? new T[_peerSize] : null;
        Collective<T> c = new(CollKind.Gather, 1, root) { Send = new Span<T>(ref value), Recv = all };
        c.Run(h);
        return all;
    }

    /// <summary>Sends value r of the root's array to rank r and returns this rank's (MPI_Scatter of one element).</summary>
    /// <param name="values">At the root, one value per rank; ignored elsewhere (may be null).</param>
    /// <param name="root">Rank that scatters.</param>
    /// <returns>This rank's value (default on an intercommunicator's root group).</returns>
    public T Scatter<T>(T[]? values, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckRoot(root);
        if (IsRoot(root))
            RequireLength(values, nameof(values), _peerSize);
        T result = default;
        Collective<T> c = new(CollKind.Scatter, 1, root) { Send = values, Recv = new Span<T>(ref result) };
        c.Run(h);
        return result;
    }

    /// <summary>Collects every rank's array at the root, in rank order (MPI_Gather).</summary>
    /// <param name="send">This rank's block (same length on every rank).</param>
    /// <param name="recv">At the root, room for Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="root">Rank that collects.</param>
    public void Gather<T>(T[] send, T[]? recv, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        GatherArgs(send, recv, root).Run(h);
    }

    /// <summary>Splits the root's array into Size blocks; rank r gets block r (MPI_Scatter).</summary>
    /// <param name="send">At the root, Size blocks of <paramref name="recv"/>.Length elements; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="recv">This rank's block (same length on every rank).</param>
    /// <param name="root">Rank that scatters.</param>
    public void Scatter<T>(T[]? send, T[] recv, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        ScatterArgs(send, recv, root).Run(h);
    }

    /// <summary>Every rank gets every rank's block, in rank order (MPI_Allgather).</summary>
    /// <param name="send">This rank's block (same length on every rank).</param>
    /// <param name="recv">Room for Size blocks.</param>
    public void Allgather<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        AllgatherArgs(send, recv).Run(h);
    }

    /// <summary>
    /// Personalized exchange: block j of rank i's <paramref name="send"/> becomes
    /// block i of rank j's <paramref name="recv"/> (MPI_Alltoall).
    /// </summary>
    /// <param name="send">Size equal blocks, one per destination.</param>
    /// <param name="recv">Room for Size blocks of the same length.</param>
    public void Alltoall<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        AlltoallArgs(send, recv).Run(h);
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
        CommHandle h = Handle;
        GathervArgs(send, recv, counts, displs, root).Run(h);
    }

    /// <summary>Sends blocks of different lengths from the root; rank r gets counts[r] elements (MPI_Scatterv).</summary>
    /// <param name="send">At the root, the data; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">Each rank's block length (one entry per rank, the same on every rank; on an intercommunicator, the root's names the remote group's ranks).</param>
    /// <param name="displs">At the root, where each block starts in <paramref name="send"/>.</param>
    /// <param name="recv">This rank's block: at least counts[Rank] elements (ignored in an intercommunicator's root group).</param>
    /// <param name="root">Rank that scatters.</param>
    public void Scatterv<T>(T[]? send, int[] counts, int[] displs, T[] recv, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        ScattervArgs(send, counts, displs, recv, root).Run(h);
    }

    /// <summary>Every rank gets every rank's block of its own length (MPI_Allgatherv).</summary>
    /// <param name="send">This rank's block: counts[Rank] elements (on an intracommunicator).</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Each rank's block length (on an intercommunicator: each remote rank's).</param>
    /// <param name="displs">Where each block starts in <paramref name="recv"/>; blocks may not overlap.</param>
    public void Allgatherv<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        CommHandle h = Handle;
        AllgathervArgs(send, recv, counts, displs).Run(h);
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
        CommHandle h = Handle;
        AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls).Run(h);
    }
}
