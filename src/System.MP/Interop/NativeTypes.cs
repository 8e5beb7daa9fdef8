namespace System.MP.Interop;

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
