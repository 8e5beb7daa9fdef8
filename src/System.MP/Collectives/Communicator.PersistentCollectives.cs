using System.MP.Interop;

namespace System.MP;

// Persistent collectives (MPI-4.0 §6.13): made collectively, started collectively.  Every rank
// makes them in the same order, and starts them in the same order.  They need an MPI-4 library
// (MPICH 4.0 or later): elsewhere they throw NotSupportedException, naming the library, before
// anything is sent.  Built-in operations only; arrays that may move are staged (Collective.Init).
public partial class Communicator
{
    /// <summary>Makes a persistent barrier (MPI_Barrier_init).</summary>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest BarrierInit()
    {
        CommHandle h = Handle;
        return new Collective<byte>(CollKind.Barrier, 0, 0).Init(h, 0, 0);
    }

    /// <summary>Makes a persistent broadcast of the root's array (MPI_Bcast_init).</summary>
    /// <param name="buffer">At the root, the data each instance sends; elsewhere, where it goes.</param>
    /// <param name="root">Rank whose data is broadcast.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest BcastInit<T>(T[] buffer, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        Collective<T> c = BcastArgs(buffer, root);
        bool sends = IsRoot(root), receives = !sends && root != Mpi.ProcNull;
        return c.Init(h, 0, buffer.Length, recvIn: sends, recvOut: receives);
    }

    /// <summary>Makes a persistent reduction to the root (MPI_Reduce_init).</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">At the root, room for the result; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="op">A built-in operation.</param>
    /// <param name="root">Rank that gets the result.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ReduceInit<T>(T[] send, T[]? recv, Op op, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return ReduceArgs(send, recv, root, op, blocking: false).Init(h, send.Length, send.Length);
    }

    /// <summary>Makes a persistent all-reduce (MPI_Allreduce_init).</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Where each instance's result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AllreduceInit<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllreduceArgs(send, recv, op, blocking: false).Init(h, send.Length, send.Length);
    }

    /// <summary>Makes a persistent gather at the root (MPI_Gather_init).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">At the root, room for Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="root">Rank that collects.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest GatherInit<T>(T[] send, T[]? recv, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return GatherArgs(send, recv, root).Init(h, send.Length, (long)send.Length * _peerSize);
    }

    /// <summary>Makes a persistent scatter from the root (MPI_Scatter_init).</summary>
    /// <param name="send">At the root, Size blocks; ignored elsewhere (may be null, but never the array passed as the other buffer).</param>
    /// <param name="recv">This rank's block.</param>
    /// <param name="root">Rank that scatters.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ScatterInit<T>(T[]? send, T[] recv, int root) where T : unmanaged
    {
        CommHandle h = Handle;
        return ScatterArgs(send, recv, root)
            .Init(h, (long)recv.Length * _peerSize, recv.Length, recvOut: OutsideRootGroup(root));
    }

    /// <summary>Makes a persistent all-gather (MPI_Allgather_init).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for Size blocks.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AllgatherInit<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllgatherArgs(send, recv).Init(h, send.Length, (long)send.Length * _peerSize);
    }

    /// <summary>Makes a persistent personalized exchange (MPI_Alltoall_init).</summary>
    /// <param name="send">Size equal blocks, one per destination.</param>
    /// <param name="recv">Room for Size blocks.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AlltoallInit<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        return AlltoallArgs(send, recv).Init(h, send.Length, send.Length);
    }

    /// <summary>Makes a persistent inclusive prefix reduction (MPI_Scan_init).</summary>
    /// <param name="send">This rank's contribution.</param>
    /// <param name="recv">Where each instance's result goes; at least as long as <paramref name="send"/>.</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ScanInit<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllreduceArgs(send, recv, op, blocking: false, CollKind.Scan, "ScanInit").Init(h, send.Length, send.Length);
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
        CommHandle h = Handle;
        return AllreduceArgs(send, recv, op, blocking: false, CollKind.Exscan, "ExscanInit")
            .Init(h, send.Length, send.Length, recvIn: _rank == 0);
    }

    /// <summary>Makes a persistent reduction scattered in equal blocks (MPI_Reduce_scatter_block_init).</summary>
    /// <param name="send">This rank's contribution: Size blocks of <paramref name="recv"/>.Length elements.</param>
    /// <param name="recv">This rank's block of each instance's result.</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ReduceScatterBlockInit<T>(T[] send, T[] recv, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        return ReduceScatterBlockArgs(send, recv, op, blocking: false).Init(h, (long)recv.Length * _peerSize, recv.Length);
    }

    /// <summary>Makes a persistent reduction scattered in blocks of different lengths (MPI_Reduce_scatter_init).</summary>
    /// <param name="send">This rank's contribution: at least the sum of <paramref name="counts"/> elements.</param>
    /// <param name="recv">This rank's block: at least counts[Rank] elements.</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="op">A built-in operation.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest ReduceScatterInit<T>(T[] send, T[] recv, int[] counts, Op op) where T : unmanaged
    {
        CommHandle h = Handle;
        Collective<T> c = ReduceScatterArgs(send, recv, counts, op, blocking: false);
        long total = 0;
        foreach (int n in counts)
            total += n;
        return c.Init(h, total, c.Desc.Count);
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
        CommHandle h = Handle;
        Collective<T> c = GathervArgs(send, recv, counts, displs, root);
        // At the root the whole extent is staged both ways: the gaps between blocks keep their contents.
        return c.Init(h, c.Desc.Count, c.RecvArray is null ? 0 : Extent(counts, displs), recvIn: true);
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
        CommHandle h = Handle;
        Collective<T> c = ScattervArgs(send, counts, displs, recv, root);
        return c.Init(h, c.SendArray is null ? 0 : Extent(counts, displs), c.Desc.Count);
    }

    /// <summary>Makes a persistent all-gather of blocks of different lengths (MPI_Allgatherv_init); arguments as for <see cref="Allgatherv"/>.</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Each rank's block length (copied: the array may change once this returns).</param>
    /// <param name="displs">Where each block starts in <paramref name="recv"/> (copied).</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest AllgathervInit<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllgathervArgs(send, recv, counts, displs).Init(h, send.Length, Extent(counts, displs), recvIn: true);
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
        CommHandle h = Handle;
        return AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
            .Init(h, Extent(sendCounts, sendDispls), Extent(recvCounts, recvDispls), recvIn: true);
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
}
