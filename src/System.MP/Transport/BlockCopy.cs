using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace System.MP.Transport;

/// <summary>
/// Copies between a payload and the objects it holds.  Buffer.MemoryCopy hands every block
/// above 2 KiB to the C runtime's memmove through a P/Invoke with a GC transition (about 150
/// instructions before the first byte moves, callgrind-objects.sh 1); a vector loop here copies
/// blocks up to <see cref="VectorLoopMaxBytes"/> without it.  Payload and objects never overlap.
/// </summary>
internal static unsafe class BlockCopy
{
    // Above this the C runtime's memmove (non-temporal stores for large blocks) is worth its call.
    private const long VectorLoopMaxBytes = 64 * 1024;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Copy(byte* source, byte* destination, long bytes)
    {
        if (Vector256.IsHardwareAccelerated && bytes >= Vector256<byte>.Count && bytes <= VectorLoopMaxBytes)
            VectorLoop(source, destination, bytes);
        else
            Buffer.MemoryCopy(source, destination, bytes, bytes);
    }

    private static void VectorLoop(byte* source, byte* destination, long bytes)
    {
        const int V = 32; // Vector256<byte>.Count
        long i = 0;
        for (; i + 4 * V <= bytes; i += 4 * V)
        {
            Vector256<byte> a = Vector256.Load(source + i), b = Vector256.Load(source + i + V);
            Vector256<byte> c = Vector256.Load(source + i + 2 * V), d = Vector256.Load(source + i + 3 * V);
            a.Store(destination + i);
            b.Store(destination + i + V);
            c.Store(destination + i + 2 * V);
            d.Store(destination + i + 3 * V);
        }
        for (; i + V <= bytes; i += V)
            Vector256.Load(source + i).Store(destination + i);
        if (i < bytes) // the last, partial vector: the final V bytes again
            Vector256.Load(source + bytes - V).Store(destination + bytes - V);
    }
}
