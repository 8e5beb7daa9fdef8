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
        byte* end = source + bytes;
        long distance = destination - source;
        for (; end - source >= 8 * V; source += 8 * V)
        {
            Vector256<byte> a = Vector256.Load(source), b = Vector256.Load(source + V);
            Vector256<byte> c = Vector256.Load(source + 2 * V), d = Vector256.Load(source + 3 * V);
            Vector256<byte> e = Vector256.Load(source + 4 * V), f = Vector256.Load(source + 5 * V);
            Vector256<byte> g = Vector256.Load(source + 6 * V), h = Vector256.Load(source + 7 * V);
            a.Store(source + distance);
            b.Store(source + distance + V);
            c.Store(source + distance + 2 * V);
            d.Store(source + distance + 3 * V);
            e.Store(source + distance + 4 * V);
            f.Store(source + distance + 5 * V);
            g.Store(source + distance + 6 * V);
            h.Store(source + distance + 7 * V);
        }
        for (; end - source >= V; source += V)
            Vector256.Load(source).Store(source + distance);
        if (source < end) // the last, partial vector: the final V bytes again
            Vector256.Load(end - V).Store(end - V + distance);
    }
}
