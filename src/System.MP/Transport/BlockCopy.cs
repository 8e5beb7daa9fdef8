using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace System.MP.Transport;

/// <summary>
/// Copies between a payload and the objects it holds.  Buffer.MemoryCopy hands every block
/// above 2 KiB to the C runtime's memmove through a P/Invoke with a GC transition (about 150
/// instructions before the first byte moves, callgrind-objects.sh 1); a vector loop here copies
/// blocks up to <see cref="VectorLoopMaxBytes"/> without it.  Payload and objects never overlap.
/// </summary>
/// <remarks>
/// The loop stores to 32-byte aligned destinations (after one unaligned vector at the edge), so no
/// store splits a cache line.  And it runs backwards when the destination lies less than
/// <see cref="AliasWindow"/> bytes above the source modulo 4 KiB: copied forwards, each load would
/// then match a store still in flight on the address bits the processor compares first (4 KiB
/// aliasing) and wait for it.  Both matter from about 2 KiB: a 4 KiB block (an int[1024]) in the
/// cache takes 29.6 ns unaligned and forwards, 26.6 ns so, 16 KiB 118 and 95 ns (AMD EPYC, mean
/// over destination offsets 0-4092 in steps of 4).
/// </remarks>
internal static unsafe class BlockCopy
{
    // Above this the C runtime's memmove (non-temporal stores for large blocks) is worth its call.
    private const long VectorLoopMaxBytes = 64 * 1024;

    private const int V = 32; // Vector256<byte>.Count

    /// <summary>Distances (destination − source, modulo 4 KiB) below this are copied backwards.</summary>
    internal const int AliasWindow = 1024;

    /// <summary>
    /// Blocks from this size on are stored aligned and copied in the direction the distance asks
    /// for; smaller ones go forwards unaligned, where the set-up would cost more than it saves.
    /// </summary>
    internal const int PlacedFromBytes = 2048;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Copy(byte* source, byte* destination, long bytes)
    {
        if (Vector256.IsHardwareAccelerated && bytes >= V && bytes <= VectorLoopMaxBytes)
        {
            if (bytes < PlacedFromBytes)
                VectorLoop(source, destination, bytes);
            else
                Placed(source, destination, bytes);
        }
        else
            Buffer.MemoryCopy(source, destination, bytes, bytes);
    }

    /// <summary>At least <see cref="V"/> bytes, forwards, unaligned.</summary>
    private static void VectorLoop(byte* source, byte* destination, long bytes)
    {
        long distance = destination - source;
        byte* end = source + bytes;
        for (; end - source >= 8 * V; source += 8 * V)
            Eight(source, distance, aligned: false);
        for (; end - source >= V; source += V)
            Vector256.Load(source).Store(source + distance);
        if (source < end) // the last, partial vector: the final V bytes again
            Vector256.Load(end - V).Store(end - V + distance);
    }

    /// <summary>At least <see cref="PlacedFromBytes"/> bytes, in the direction their distance asks for.</summary>
    private static void Placed(byte* source, byte* destination, long bytes)
    {
        long distance = destination - source;
        if ((distance & 4095) < AliasWindow)
            Backwards(source, source + bytes, distance);
        else
            Forwards(source, source + bytes, distance);
    }

    /// <summary>At least <see cref="PlacedFromBytes"/> bytes, first to last.</summary>
    private static void Forwards(byte* source, byte* end, long distance)
    {
        Vector256.Load(source).Store(source + distance); // the first vector, unaligned
        source += V - ((nint)(source + distance) & (V - 1)); // destination aligned from here
        for (; end - source >= 8 * V; source += 8 * V)
            Eight(source, distance, aligned: true);
        if (source < end) // the rest: the final 8 vectors again, unaligned
            Eight(end - 8 * V, distance, aligned: false);
    }

    /// <summary>At least <see cref="PlacedFromBytes"/> bytes, last to first.</summary>
    private static void Backwards(byte* source, byte* end, long distance)
    {
        Vector256.Load(end - V).Store(end - V + distance); // the last vector, unaligned
        end -= (nint)(end + distance) & (V - 1); // destination aligned from here down
        for (; end - source >= 8 * V; end -= 8 * V)
            Eight(end - 8 * V, distance, aligned: true);
        if (end > source) // the rest: the first 8 vectors again, unaligned
            Eight(source, distance, aligned: false);
    }

    /// <summary>
    /// 8 vectors from <paramref name="from"/> to <paramref name="from"/> + <paramref name="distance"/>, all
    /// loaded before any is stored; <paramref name="aligned"/> when the destination is on 32 bytes.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Eight(byte* from, long distance, bool aligned)
    {
        Vector256<byte> a = Vector256.Load(from), b = Vector256.Load(from + V);
        Vector256<byte> c = Vector256.Load(from + 2 * V), d = Vector256.Load(from + 3 * V);
        Vector256<byte> e = Vector256.Load(from + 4 * V), f = Vector256.Load(from + 5 * V);
        Vector256<byte> g = Vector256.Load(from + 6 * V), h = Vector256.Load(from + 7 * V);
        byte* to = from + distance;
        Put(a, to, aligned);
        Put(b, to + V, aligned);
        Put(c, to + 2 * V, aligned);
        Put(d, to + 3 * V, aligned);
        Put(e, to + 4 * V, aligned);
        Put(f, to + 5 * V, aligned);
        Put(g, to + 6 * V, aligned);
        Put(h, to + 7 * V, aligned);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Put(Vector256<byte> v, byte* to, bool aligned)
    {
        if (aligned)
            v.StoreAligned(to);
        else
            v.Store(to);
    }
}
