using System.Runtime.InteropServices;

namespace System.MP.Interop;

/// <summary>Mirror of mp_coll_t: one collective call.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct CollDesc
{
    internal int Kind, Root, DType, ElemSize, Op, Reserved;
    internal long Count;
    internal void* SendBuf;
    internal void* RecvBuf;
    internal int* SendCounts, SDispls, RecvCounts, RDispls;
}

/// <summary>mpcore's collective kinds (mp_coll_kind).</summary>
internal static class CollKind
{
    internal const int Barrier = 0, Bcast = 1, Reduce = 2, Allreduce = 3, Scan = 4, Exscan = 5,
        ReduceScatterBlock = 6, Gather = 7, Scatter = 8, Allgather = 9, Alltoall = 10,
        Gatherv = 11, Scatterv = 12, Allgatherv = 13, Alltoallv = 14,
        ReduceScatter = 15;
}

/// <summary>mpcore's neighborhood collective kinds (mp_neighbor_kind).</summary>
internal static class NeighborKind
{
    internal const int Allgather = 0, Allgatherv = 1, Alltoall = 2, Alltoallv = 3, Alltoallw = 4;
}

/// <summary>
/// What a nonblocking neighborhood collective needs beyond its descriptor: the byte displacements
/// and datatype scratch of the w form, inside <see cref="Memory"/> (NativeMemory; null when the
/// call has no arrays to keep), which MPI reads until the operation completes.
/// </summary>
internal unsafe struct NeighborBlock
{
    internal long* SendBytes, RecvBytes;
    internal void* Scratch;
    internal void* Memory;
}
