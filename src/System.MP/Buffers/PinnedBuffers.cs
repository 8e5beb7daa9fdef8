using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// Arrays allocated on the pinned object heap by <see cref="Mpi.AllocatePinned{T}"/>.
/// They never move, so nonblocking operations on them need no pin: no GCHandle
/// under plain dotnet, no in-flight registration under motor.  The runtime has
/// no public way to ask whether an arbitrary array lives on the pinned object
/// heap, so only arrays allocated here are known; the table holds them weakly.
/// </summary>
internal static class PinnedBuffers
{
    private static readonly ConditionalWeakTable<Array, object?> s_table = new();

    /// <summary>1 once any array was allocated here; in a class without a static constructor,
    /// so every posting reads it without a class-initialization check.</summary>
    private static class Allocated
    {
        internal static int Any;
    }

    /// <summary>
    /// Where the data of an array from <see cref="Allocate{T}"/> starts, when it can be arranged:
    /// on a cache line.  The GC aligns objects to 8 bytes only, and a copy between buffers whose
    /// addresses differ by other than a multiple of 16 runs slower: on the AMD EPYC machines
    /// Motor is measured on, glibc's memcpy of 256 KiB takes 1.4 times as long, and 15 times as
    /// long when the destination starts 1 to 15 bytes past the source modulo 4 KiB (perf/README.md,
    /// the placement experiment).  MPI libraries and the kernel copy messages between user
    /// buffers and their own cache-line-aligned ones.
    /// </summary>
    internal const int DataAlignment = 64;

    /// <summary>A pinned-heap array whose data starts on a <see cref="DataAlignment"/> boundary when it can be arranged.</summary>
    internal static T[] Allocate<T>(int length) where T : unmanaged
    {
        var array = AllocateAligned<T>(length);
        s_table.AddOrUpdate(array, null);
        Volatile.Write(ref Allocated.Any, 1);
        return array;
    }

    /// <summary>
    /// The pinned object heap hands out objects one after another from the end of its region
    /// (unless an earlier one's space was freed), and an array's data starts 16 bytes into its
    /// object.  A 24-byte probe shows where the next object would start; a spacer of the right
    /// size then moves the array onto the boundary.  Checked, not assumed: up to three tries,
    /// then the array as it came (only the speed of copies depends on it).  The probes and
    /// spacers are garbage at once, at most a few hundred bytes per array.
    /// </summary>
    private static unsafe T[] AllocateAligned<T>(int length) where T : unmanaged
    {
        const int ObjectHeader = 16, EmptyByteArray = 24;
        T[] array = [];
        if (Extension.Aligns) // motor's GC extension places every such array itself
        {
            array = GC.AllocateArray<T>(length, pinned: true);
            if ((nint)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(array)) % DataAlignment == 0)
                return array;
        }
        for (int attempt = 0; attempt < 3; attempt++)
        {
            byte[] probe = GC.AllocateUninitializedArray<byte>(0, pinned: true);
            nint next = (nint)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(probe)) - ObjectHeader + EmptyByteArray;
            int gap = (int)((DataAlignment - (next + ObjectHeader) % DataAlignment) % DataAlignment);
            if (gap != 0)
                GC.KeepAlive(GC.AllocateUninitializedArray<byte>((gap < EmptyByteArray ? gap + DataAlignment : gap) - EmptyByteArray, pinned: true));
            array = GC.AllocateArray<T>(length, pinned: true);
            if ((nint)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(array)) % DataAlignment == 0)
                break;
        }
        return array;
    }

    /// <summary>
    /// Whether motor's GC extension starts pinned-heap arrays' data on the boundary itself
    /// (<see cref="MpiStatistics.GcAlignsLargeArrays"/>): then no probe or spacer is needed.
    /// Read once; the extension decides when the GC starts.
    /// </summary>
    private static class Extension
    {
        internal static readonly bool Aligns = Mpi.IsHosted && BufferPolicy.GcExtensionStats().GcAlignedArrays != 0;
    }

    /// <summary>True once any array was allocated here (before that, no array is a pinned-heap one).</summary>
    internal static bool AnyAllocated
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Volatile.Read(ref Allocated.Any) != 0;
    }

    /// <summary>True for an array that can never move (one cheap load when none was ever allocated).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool Contains(Array? array) =>
        Volatile.Read(ref Allocated.Any) != 0 && array is not null && s_table.TryGetValue(array, out _);

    /// <summary>
    /// <see cref="Contains(Array?)"/> for a posting thread, which remembers the last
    /// pinned array it found (weakly) in <paramref name="last"/>: a window of
    /// operations on one buffer looks it up once instead of per operation.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool Contains(Array array, ref GCHandle last)
    {
        if (Volatile.Read(ref Allocated.Any) == 0)
            return false;
        return ReferenceEquals(last.Target, array) || Lookup(array, ref last);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool Lookup(Array array, ref GCHandle last)
    {
        if (!s_table.TryGetValue(array, out _))
            return false;
        last.Target = array;
        return true;
    }
}
