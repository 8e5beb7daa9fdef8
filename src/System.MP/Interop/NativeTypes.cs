using System.Runtime.InteropServices;

namespace System.MP.Interop;

/// <summary>Mirror of mp_coll_t: one collective call (its layout checked against CoreLayout by CoreInterfaceTests).</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct CollDesc
{
    internal int Kind, Root, DType, ElemSize, Op, Reserved;
    internal long Count;
    internal void* SendBuf;
    internal void* RecvBuf;
    internal int* SendCounts, SDispls, RecvCounts, RDispls;
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
