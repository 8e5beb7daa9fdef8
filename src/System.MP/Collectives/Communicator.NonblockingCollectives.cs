using System.MP.Interop;

namespace System.MP;

// Nonblocking collectives (MPI-4.0 §6.12): the arrays are held as those of ISend/IRecv until
// completion; counts and displacements are copied (Collective.Post).  Built-in operations only.
public partial class Communicator
{
    /// <summary>Starts a barrier (MPI_Ibarrier); it completes once every rank has started it.</summary>
    public Request IBarrier()
    {
        CommHandle h = Handle;
        return new Collective<byte>(CollKind.Barrier, 0, 0).Post(h);
    }

    /// <summary>Starts a broadcast of the root's array (MPI_Ibcast).</summary>
    /// <param name="buffer">At the root, the data; elsewhere, where it goes.  Untouchable until completion.</param>
    /// <param name="root">Rank whose data is broadcast.</param>
    public Request IBcast<T>(T[] buffer, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return BcastArgs(buffer, root).Post(h);
    }

    /// <summary>Starts a reduction to the root (MPI_Ireduce).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">At the root, room for the result; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="op">A built-in operation.</param>
    /// <param name="root">Rank that gets the result.</param>
    public Request IReduce<T>(T[] send, T[]? recv, Op op, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return ReduceArgs(send, recv, root, op, blocking: false).Post(h);
    }

    /// <summary>Starts an all-reduce (MPI_Iallreduce).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Room for the result.</param>
    /// <param name="op">A built-in operation.</param>
    public Request IAllreduce<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllreduceArgs(send, recv, op, blocking: false).Post(h);
    }

    /// <summary>Starts a gather at the root (MPI_Igather).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">At the root, room for Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="root">Rank that collects.</param>
    public Request IGather<T>(T[] send, T[]? recv, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return GatherArgs(send, recv, root).Post(h);
    }

    /// <summary>Starts a scatter from the root (MPI_Iscatter).</summary>
    /// <param name="send">At the root, Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="recv">This rank's block.</param>
    /// <param name="root">Rank that scatters.</param>
    public Request IScatter<T>(T[]? send, T[] recv, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return ScatterArgs(send, recv, root).Post(h);
    }

    /// <summary>Starts an all-gather (MPI_Iallgather).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for Size blocks.</param>
    public Request IAllgather<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllgatherArgs(send, recv).Post(h);
    }

    /// <summary>Starts a personalized exchange (MPI_Ialltoall).</summary>
    /// <param name="send">Size equal blocks, one per destination.</param>
    /// <param name="recv">Room for Size blocks.</param>
    public Request IAlltoall<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        return AlltoallArgs(send, recv).Post(h);
    }

    /// <summary>Starts an inclusive prefix reduction of arrays (MPI_Iscan).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Room for the result.</param>
    /// <param name="op">A built-in operation.</param>
    public Request IScan<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllreduceArgs(send, recv, op, blocking: false, CollKind.Scan, "IScan").Post(h);
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
        CommHandle h = Handle;
        return AllreduceArgs(send, recv, op, blocking: false, CollKind.Exscan, "IExscan").Post(h);
    }

    /// <summary>Starts a reduction scattered in equal blocks (MPI_Ireduce_scatter_block).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution: Size blocks of <paramref name="recv"/>.Length elements.</param>
    /// <param name="recv">This rank's block of the result.</param>
    /// <param name="op">A built-in operation.</param>
    public Request IReduceScatterBlock<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        return ReduceScatterBlockArgs(send, recv, op, blocking: false).Post(h);
    }

    /// <summary>Starts a reduction scattered in blocks of different lengths (MPI_Ireduce_scatter).  Built-in operations only.</summary>
    /// <param name="send">This rank's contribution: at least the sum of <paramref name="counts"/> elements.</param>
    /// <param name="recv">This rank's block: at least counts[Rank] elements.</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="op">A built-in operation.</param>
    public Request IReduceScatter<T>(T[] send, T[] recv, int[] counts, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        return ReduceScatterArgs(send, recv, counts, op, blocking: false).Post(h);
    }

    /// <summary>Starts a gather of blocks of different lengths (MPI_Igatherv); arguments as for <see cref="Gatherv"/>.</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">At the root, where the blocks go; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">At the root, each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">At the root, where each block starts in <paramref name="recv"/> (copied).</param>
    /// <param name="root">Rank that collects.</param>
    public Request IGatherv<T>(T[] send, T[]? recv, int[] counts, int[] displs, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return GathervArgs(send, recv, counts, displs, root).Post(h);
    }

    /// <summary>Starts a scatter of blocks of different lengths (MPI_Iscatterv); arguments as for <see cref="Scatterv"/>.</summary>
    /// <param name="send">At the root, the data; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">At the root, where each block starts in <paramref name="send"/> (copied).</param>
    /// <param name="recv">This rank's block.</param>
    /// <param name="root">Rank that scatters.</param>
    public Request IScatterv<T>(T[]? send, int[] counts, int[] displs, T[] recv, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return ScattervArgs(send, counts, displs, recv, root).Post(h);
    }

    /// <summary>Starts an all-gather of blocks of different lengths (MPI_Iallgatherv); arguments as for <see cref="Allgatherv"/>.</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">Where each block starts in <paramref name="recv"/> (copied).</param>
    public Request IAllgatherv<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllgathervArgs(send, recv, counts, displs).Post(h);
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
        CommHandle h = Handle;
        return AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls).Post(h);
    }
}
