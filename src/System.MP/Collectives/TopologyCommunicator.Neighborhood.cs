using System.MP.Interop;

namespace System.MP;

// Neighborhood collectives (MPI-4.0 §8.6): blocking, nonblocking (§8.7) and persistent (§8.8).
// Receive blocks are laid out in Sources order, send blocks in Destinations order; a block
// from or to Mpi.ProcNull (past a non-periodic grid edge) is neither sent nor written.
public abstract unsafe partial class TopologyCommunicator
{
    /// <summary>Sends this rank's block to every destination and gathers one block from every source (MPI_Neighbor_allgather).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks of send.Length elements, in <see cref="Sources"/> order.</param>
    public void NeighborAllgather<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        AllgatherArgs(send, recv).Run(h);
    }

    /// <summary>Gathers blocks of different lengths from the sources (MPI_Neighbor_allgatherv).</summary>
    /// <param name="send">This rank's block (sent whole to every destination).</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Elements from each source (<see cref="InDegree"/> entries).</param>
    /// <param name="displs">Where each source's block starts in <paramref name="recv"/>; blocks may not overlap.</param>
    public void NeighborAllgatherv<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        CommHandle h = Handle;
        AllgathervArgs(send, recv, counts, displs).Run(h);
    }

    /// <summary>Sends a block of <paramref name="count"/> elements to each destination and receives one from each source (MPI_Neighbor_alltoall).</summary>
    /// <param name="send"><see cref="OutDegree"/> blocks, in <see cref="Destinations"/> order.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks, in <see cref="Sources"/> order.</param>
    /// <param name="count">Elements per block (the same on every rank).</param>
    public void NeighborAlltoall<T>(T[] send, T[] recv, int count) where T : unmanaged
    {
        CommHandle h = Handle;
        AlltoallArgs(send, recv, count).Run(h);
    }

    /// <summary>Personalized exchange with blocks of different lengths along the edges (MPI_Neighbor_alltoallv).</summary>
    /// <param name="send">The outgoing data.</param>
    /// <param name="sendCounts">Elements for each destination (<see cref="OutDegree"/> entries).</param>
    /// <param name="sendDispls">Where each destination's block starts in <paramref name="send"/>.</param>
    /// <param name="recv">Where incoming blocks go.</param>
    /// <param name="recvCounts">Elements from each source (<see cref="InDegree"/> entries).</param>
    /// <param name="recvDispls">Where each source's block starts in <paramref name="recv"/>; blocks may not overlap.</param>
    public void NeighborAlltoallv<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                     T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged
    {
        CommHandle h = Handle;
        AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls).Run(h);
    }

    /// <summary>
    /// Personalized exchange whose blocks are placed by byte displacements (MPI_Neighbor_alltoallw).
    /// </summary>
    /// <remarks>
    /// MPI's w form gives each neighbour its own datatype; System.MP moves typed arrays and has no
    /// derived datatypes, so every block here has the element type <typeparamref name="T"/>, and what
    /// the w form adds is displacements in bytes (MPI_Aint): a block may start at any byte of the
    /// buffer, e.g. records of mixed layout packed in a byte[].
    /// </remarks>
    /// <param name="send">The outgoing data.</param>
    /// <param name="sendCounts">Elements for each destination (<see cref="OutDegree"/> entries).</param>
    /// <param name="sendByteDispls">Byte offset of each destination's block in <paramref name="send"/>.</param>
    /// <param name="recv">Where incoming blocks go.</param>
    /// <param name="recvCounts">Elements from each source (<see cref="InDegree"/> entries).</param>
    /// <param name="recvByteDispls">Byte offset of each source's block in <paramref name="recv"/>; blocks may not overlap.</param>
    public void NeighborAlltoallw<T>(T[] send, int[] sendCounts, long[] sendByteDispls,
                                     T[] recv, int[] recvCounts, long[] recvByteDispls) where T : unmanaged
    {
        CommHandle h = Handle;
        AlltoallwArgs(send, sendCounts, sendByteDispls, recv, recvCounts, recvByteDispls).Run(h);
    }

    // ---- nonblocking forms (MPI-4.0 §8.7): the arrays are held like those of IAlltoall; the
    // counts and displacements are copied to native memory the request keeps until completion ----

    /// <summary>Starts a neighborhood all-gather (MPI_Ineighbor_allgather).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks of send.Length elements.</param>
    public Request INeighborAllgather<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllgatherArgs(send, recv).Post(h);
    }

    /// <summary>Starts a neighborhood all-gather of blocks of different lengths (MPI_Ineighbor_allgatherv).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Elements from each source (<see cref="InDegree"/> entries).</param>
    /// <param name="displs">Where each source's block starts in <paramref name="recv"/>.</param>
    public Request INeighborAllgatherv<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllgathervArgs(send, recv, counts, displs).Post(h);
    }

    /// <summary>Starts a neighborhood personalized exchange (MPI_Ineighbor_alltoall).</summary>
    /// <param name="send"><see cref="OutDegree"/> blocks.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks.</param>
    /// <param name="count">Elements per block.</param>
    public Request INeighborAlltoall<T>(T[] send, T[] recv, int count) where T : unmanaged
    {
        CommHandle h = Handle;
        return AlltoallArgs(send, recv, count).Post(h);
    }

    /// <summary>Starts a neighborhood exchange of blocks of different lengths (MPI_Ineighbor_alltoallv).</summary>
    /// <param name="send">The outgoing data.</param>
    /// <param name="sendCounts">Elements for each destination.</param>
    /// <param name="sendDispls">Where each destination's block starts in <paramref name="send"/>.</param>
    /// <param name="recv">Where incoming blocks go.</param>
    /// <param name="recvCounts">Elements from each source.</param>
    /// <param name="recvDispls">Where each source's block starts in <paramref name="recv"/>.</param>
    public Request INeighborAlltoallv<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                         T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged
    {
        CommHandle h = Handle;
        return AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls).Post(h);
    }

    /// <summary>Starts a neighborhood exchange placed by byte displacements (MPI_Ineighbor_alltoallw); see <see cref="NeighborAlltoallw{T}"/>.</summary>
    /// <param name="send">The outgoing data.</param>
    /// <param name="sendCounts">Elements for each destination.</param>
    /// <param name="sendByteDispls">Byte offset of each destination's block.</param>
    /// <param name="recv">Where incoming blocks go.</param>
    /// <param name="recvCounts">Elements from each source.</param>
    /// <param name="recvByteDispls">Byte offset of each source's block.</param>
    public Request INeighborAlltoallw<T>(T[] send, int[] sendCounts, long[] sendByteDispls,
                                         T[] recv, int[] recvCounts, long[] recvByteDispls) where T : unmanaged
    {
        CommHandle h = Handle;
        return AlltoallwArgs(send, sendCounts, sendByteDispls, recv, recvCounts, recvByteDispls).Post(h);
    }

    // ---- persistent forms (MPI-4.0 §8.8): made and started collectively, staged like the
    // persistent collectives; NotSupportedException, naming the library, without MPI 4 ----

    /// <summary>Makes a persistent neighborhood all-gather (MPI_Neighbor_allgather_init).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks of send.Length elements.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest NeighborAllgatherInit<T>(T[] send, T[] recv) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllgatherArgs(send, recv).Init(h, send.Length, (long)send.Length * InDegree, recvIn: true);
    }

    /// <summary>Makes a persistent neighborhood all-gather of blocks of different lengths (MPI_Neighbor_allgatherv_init).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Elements from each source (copied: later changes do not count).</param>
    /// <param name="displs">Where each source's block starts in <paramref name="recv"/>.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest NeighborAllgathervInit<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        CommHandle h = Handle;
        return AllgathervArgs(send, recv, counts, displs).Init(h, send.Length, recv.Length, recvIn: true);
    }

    /// <summary>Makes a persistent neighborhood personalized exchange (MPI_Neighbor_alltoall_init).</summary>
    /// <param name="send"><see cref="OutDegree"/> blocks.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks.</param>
    /// <param name="count">Elements per block.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest NeighborAlltoallInit<T>(T[] send, T[] recv, int count) where T : unmanaged
    {
        CommHandle h = Handle;
        return AlltoallArgs(send, recv, count).Init(h, (long)count * OutDegree, (long)count * InDegree, recvIn: true);
    }

    /// <summary>Makes a persistent neighborhood exchange of blocks of different lengths (MPI_Neighbor_alltoallv_init).</summary>
    /// <param name="send">The outgoing data.</param>
    /// <param name="sendCounts">Elements for each destination (copied).</param>
    /// <param name="sendDispls">Where each destination's block starts in <paramref name="send"/> (copied).</param>
    /// <param name="recv">Where incoming blocks go.</param>
    /// <param name="recvCounts">Elements from each source (copied).</param>
    /// <param name="recvDispls">Where each source's block starts in <paramref name="recv"/> (copied).</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest NeighborAlltoallvInit<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                                      T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged
    {
        CommHandle h = Handle;
        return AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
            .Init(h, send.Length, recv.Length, recvIn: true);
    }

    // ---- the checked arguments, shared by the three forms (never one array as send and recv:
    // CheckDistinct, as for every collective) ----

    private Collective<T> AllgatherArgs<T>(T[] send, T[] recv) where T : unmanaged =>
        AllgatherArgs(NeighborKind.Allgather, InDegree, send, recv, neighbor: true);

    private Collective<T> AllgathervArgs<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged =>
        AllgathervArgs(NeighborKind.Allgatherv, InDegree, SR.NeighborCountsLength, send, recv, counts, displs,
                       ownCount: false, neighbor: true);

    private Collective<T> AlltoallArgs<T>(T[] send, T[] recv, int count) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (count < 0)
            throw new ArgumentOutOfRangeException(nameof(count), count, SR.Format(SR.NegativeEntry, nameof(count), 0, count));
        RequireLength(send, nameof(send), (long)count * OutDegree);
        RequireLength(recv, nameof(recv), (long)count * InDegree);
        return new(NeighborKind.Alltoall, count, 0, send, recv) { Neighbor = true };
    }

    private Collective<T> AlltoallvArgs<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                           T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged =>
        AlltoallvArgs(NeighborKind.Alltoallv, OutDegree, InDegree, SR.NeighborCountsLength,
                      send, sendCounts, sendDispls, recv, recvCounts, recvDispls, neighbor: true);

    private Collective<T> AlltoallwArgs<T>(T[] send, int[] sendCounts, long[] sendByteDispls,
                                      T[] recv, int[] recvCounts, long[] recvByteDispls) where T : unmanaged
    {
        CheckPair(send, recv);
        CheckBlocks(OutDegree, SR.NeighborCountsLength, sendCounts, nameof(sendCounts), sendByteDispls, nameof(sendByteDispls),
                    sizeof(T), (long)send.Length * sizeof(T), nameof(send), noOverlap: false);
        CheckBlocks(InDegree, SR.NeighborCountsLength, recvCounts, nameof(recvCounts), recvByteDispls, nameof(recvByteDispls),
                    sizeof(T), (long)recv.Length * sizeof(T), nameof(recv), noOverlap: true);
        return new(NeighborKind.Alltoallw, 0, 0, send, recv)
        {
            SendCounts = sendCounts,
            RecvCounts = recvCounts,
            SendBytes = sendByteDispls,
            RecvBytes = recvByteDispls,
            Scratch = InDegree + OutDegree, // the core's per-neighbour datatypes of a nonblocking call
            Neighbor = true,
        };
    }
}
