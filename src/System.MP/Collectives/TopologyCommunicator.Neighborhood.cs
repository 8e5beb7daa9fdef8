using System.MP.Interop;
using System.Runtime.InteropServices;

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
        int h = Handle;
        CollDesc d = AllgatherArgs(send, recv);
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            RunNeighbor(h, &d, null, null);
        }
    }

    /// <summary>Gathers blocks of different lengths from the sources (MPI_Neighbor_allgatherv).</summary>
    /// <param name="send">This rank's block (sent whole to every destination).</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Elements from each source (<see cref="InDegree"/> entries).</param>
    /// <param name="displs">Where each source's block starts in <paramref name="recv"/>; blocks may not overlap.</param>
    public void NeighborAllgatherv<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
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
            RunNeighbor(h, &d, null, null);
        }
    }

    /// <summary>Sends a block of <paramref name="count"/> elements to each destination and receives one from each source (MPI_Neighbor_alltoall).</summary>
    /// <param name="send"><see cref="OutDegree"/> blocks, in <see cref="Destinations"/> order.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks, in <see cref="Sources"/> order.</param>
    /// <param name="count">Elements per block (the same on every rank).</param>
    public void NeighborAlltoall<T>(T[] send, T[] recv, int count) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallArgs(send, recv, count);
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            RunNeighbor(h, &d, null, null);
        }
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
            RunNeighbor(h, &d, null, null);
        }
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
        int h = Handle;
        CollDesc d = AlltoallwArgs(send, sendCounts, sendByteDispls, recv, recvCounts, recvByteDispls);
        fixed (T* s = send)
        fixed (T* r = recv)
        fixed (int* sc = sendCounts)
        fixed (int* rc = recvCounts)
        fixed (long* sb = sendByteDispls)
        fixed (long* rb = recvByteDispls)
        {
            d.SendBuf = s;
            d.RecvBuf = r;
            d.SendCounts = sc;
            d.RecvCounts = rc;
            RunNeighbor(h, &d, sb, rb);
        }
    }

    // ---- nonblocking forms (MPI-4.0 §8.7): the arrays are held like those of IAlltoall; the
    // counts and displacements are copied to native memory the request keeps until completion ----

    /// <summary>Starts a neighborhood all-gather (MPI_Ineighbor_allgather).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks of send.Length elements.</param>
    public Request INeighborAllgather<T>(T[] send, T[] recv) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgatherArgs(send, recv);
        NeighborBlock b = default;
        return Request.PostCollective(h, &d, send, recv, &b);
    }

    /// <summary>Starts a neighborhood all-gather of blocks of different lengths (MPI_Ineighbor_allgatherv).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Elements from each source (<see cref="InDegree"/> entries).</param>
    /// <param name="displs">Where each source's block starts in <paramref name="recv"/>.</param>
    public Request INeighborAllgatherv<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgathervArgs(send, recv, counts, displs);
        NeighborBlock b = Keep(ref d, null, null, counts, displs, null, null);
        return Request.PostCollective(h, &d, send, recv, &b);
    }

    /// <summary>Starts a neighborhood personalized exchange (MPI_Ineighbor_alltoall).</summary>
    /// <param name="send"><see cref="OutDegree"/> blocks.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks.</param>
    /// <param name="count">Elements per block.</param>
    public Request INeighborAlltoall<T>(T[] send, T[] recv, int count) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallArgs(send, recv, count);
        NeighborBlock b = default;
        return Request.PostCollective(h, &d, send, recv, &b);
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
        int h = Handle;
        CollDesc d = AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
        NeighborBlock b = Keep(ref d, sendCounts, sendDispls, recvCounts, recvDispls, null, null);
        return Request.PostCollective(h, &d, send, recv, &b);
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
        int h = Handle;
        CollDesc d = AlltoallwArgs(send, sendCounts, sendByteDispls, recv, recvCounts, recvByteDispls);
        NeighborBlock b = Keep(ref d, sendCounts, null, recvCounts, null, sendByteDispls, recvByteDispls);
        return Request.PostCollective(h, &d, send, recv, &b);
    }

    // ---- persistent forms (MPI-4.0 §8.8): made and started collectively, staged like the
    // persistent collectives; NotSupportedException, naming the library, without MPI 4 ----

    /// <summary>Makes a persistent neighborhood all-gather (MPI_Neighbor_allgather_init).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks of send.Length elements.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest NeighborAllgatherInit<T>(T[] send, T[] recv) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgatherArgs(send, recv);
        return PersistentRequest.InitCollective(h, d, send, send.Length, recv, (long)send.Length * InDegree,
                                                true, true, neighbor: true);
    }

    /// <summary>Makes a persistent neighborhood all-gather of blocks of different lengths (MPI_Neighbor_allgatherv_init).</summary>
    /// <param name="send">This rank's block.</param>
    /// <param name="recv">Where the blocks go.</param>
    /// <param name="counts">Elements from each source (copied: later changes do not count).</param>
    /// <param name="displs">Where each source's block starts in <paramref name="recv"/>.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest NeighborAllgathervInit<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AllgathervArgs(send, recv, counts, displs);
        fixed (int* c = counts)
        fixed (int* dp = displs)
        {
            d.RecvCounts = c;
            d.RDispls = dp;
            return PersistentRequest.InitCollective(h, d, send, send.Length, recv, recv.Length, true, true, neighbor: true);
        }
    }

    /// <summary>Makes a persistent neighborhood personalized exchange (MPI_Neighbor_alltoall_init).</summary>
    /// <param name="send"><see cref="OutDegree"/> blocks.</param>
    /// <param name="recv">Room for <see cref="InDegree"/> blocks.</param>
    /// <param name="count">Elements per block.</param>
    /// <exception cref="NotSupportedException">The MPI library has no persistent collectives.</exception>
    public PersistentRequest NeighborAlltoallInit<T>(T[] send, T[] recv, int count) where T : unmanaged
    {
        int h = Handle;
        CollDesc d = AlltoallArgs(send, recv, count);
        return PersistentRequest.InitCollective(h, d, send, (long)count * OutDegree, recv, (long)count * InDegree,
                                                true, true, neighbor: true);
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
        int h = Handle;
        CollDesc d = AlltoallvArgs(send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
        fixed (int* sc = sendCounts)
        fixed (int* sd = sendDispls)
        fixed (int* rc = recvCounts)
        fixed (int* rd = recvDispls)
        {
            d.SendCounts = sc;
            d.SDispls = sd;
            d.RecvCounts = rc;
            d.RDispls = rd;
            return PersistentRequest.InitCollective(h, d, send, send.Length, recv, recv.Length, true, true, neighbor: true);
        }
    }

    // ---- the checked arguments, shared by the three forms (never one array as send and recv:
    // CheckDistinct, as for every collective) ----

    private CollDesc AllgatherArgs<T>(T[] send, T[] recv) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        RequireLength(recv, nameof(recv), (long)send.Length * InDegree);
        return Desc<T>(NeighborKind.Allgather, send.Length, null, null, 0);
    }

    private CollDesc AllgathervArgs<T>(T[] send, T[] recv, int[] counts, int[] displs) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        CheckBlocks(InDegree, SR.NeighborCountsLength, counts, nameof(counts), displs, nameof(displs), 1, recv.Length, nameof(recv), noOverlap: true);
        return Desc<T>(NeighborKind.Allgatherv, send.Length, null, null, 0);
    }

    private CollDesc AlltoallArgs<T>(T[] send, T[] recv, int count) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (count < 0)
            throw new ArgumentOutOfRangeException(nameof(count), count, SR.Format(SR.NegativeEntry, nameof(count), 0, count));
        RequireLength(send, nameof(send), (long)count * OutDegree);
        RequireLength(recv, nameof(recv), (long)count * InDegree);
        return Desc<T>(NeighborKind.Alltoall, count, null, null, 0);
    }

    private CollDesc AlltoallvArgs<T>(T[] send, int[] sendCounts, int[] sendDispls,
                                      T[] recv, int[] recvCounts, int[] recvDispls) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        CheckBlocks(OutDegree, SR.NeighborCountsLength, sendCounts, nameof(sendCounts), sendDispls, nameof(sendDispls), 1,
                    send.Length, nameof(send), noOverlap: false);
        CheckBlocks(InDegree, SR.NeighborCountsLength, recvCounts, nameof(recvCounts), recvDispls, nameof(recvDispls), 1,
                    recv.Length, nameof(recv), noOverlap: true);
        return Desc<T>(NeighborKind.Alltoallv, 0, null, null, 0);
    }

    private CollDesc AlltoallwArgs<T>(T[] send, int[] sendCounts, long[] sendByteDispls,
                                      T[] recv, int[] recvCounts, long[] recvByteDispls) where T : unmanaged
    {
        CheckDistinct(send, recv); // first: the aliasing, not the lengths it makes inconsistent
        if (send is null)
            ThrowHelper.ThrowNull(nameof(send));
        if (recv is null)
            ThrowHelper.ThrowNull(nameof(recv));
        CheckBlocks(OutDegree, SR.NeighborCountsLength, sendCounts, nameof(sendCounts), sendByteDispls, nameof(sendByteDispls),
                    sizeof(T), (long)send.Length * sizeof(T), nameof(send), noOverlap: false);
        CheckBlocks(InDegree, SR.NeighborCountsLength, recvCounts, nameof(recvCounts), recvByteDispls, nameof(recvByteDispls),
                    sizeof(T), (long)recv.Length * sizeof(T), nameof(recv), noOverlap: true);
        return Desc<T>(NeighborKind.Alltoallw, 0, null, null, 0);
    }

    private static void RunNeighbor(int h, CollDesc* d, long* sendBytes, long* recvBytes) =>
        ThrowHelper.Check(Core.NeighborRun(h, d, sendBytes, recvBytes));

    /// <summary>
    /// Copies the counts and displacements of a nonblocking call to native memory (MPI reads
    /// them until completion, MPI-4.0 §6.12) and points the descriptor at the copies; the w form
    /// also gets room for the core's per-neighbour datatypes.
    /// </summary>
    private NeighborBlock Keep(ref CollDesc d, int[]? sendCounts, int[]? sendDispls, int[]? recvCounts, int[]? recvDispls,
                               long[]? sendBytes, long[]? recvBytes)
    {
        int ints = Len(sendCounts) + Len(sendDispls) + Len(recvCounts) + Len(recvDispls);
        int longs = Len(sendBytes) + Len(recvBytes) + (sendBytes is null ? 0 : InDegree + OutDegree);
        nuint intBytes = (nuint)(((long)ints * sizeof(int) + 7) & ~7L);
        byte* block = (byte*)NativeMemory.Alloc(intBytes + (nuint)longs * sizeof(long) + 1);
        int* i = (int*)block;
        long* l = (long*)(block + intBytes);
        NeighborBlock b = default;
        b.Memory = block;
        if (sendCounts is not null)
            d.SendCounts = Put(ref i, sendCounts);
        if (sendDispls is not null)
            d.SDispls = Put(ref i, sendDispls);
        if (recvCounts is not null)
            d.RecvCounts = Put(ref i, recvCounts);
        if (recvDispls is not null)
            d.RDispls = Put(ref i, recvDispls);
        if (sendBytes is not null && recvBytes is not null)
        {
            b.SendBytes = Put(ref l, sendBytes);
            b.RecvBytes = Put(ref l, recvBytes);
            b.Scratch = l;
        }
        return b;
    }

    private static int Len(Array? a) => a?.Length ?? 0;

    private static TElem* Put<TElem>(ref TElem* at, TElem[] from) where TElem : unmanaged
    {
        TElem* to = at;
        from.AsSpan().CopyTo(new Span<TElem>(to, from.Length));
        at += from.Length;
        return to;
    }
}
