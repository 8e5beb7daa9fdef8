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

    internal static T[] Allocate<T>(int length) where T : unmanaged
    {
        var array = GC.AllocateArray<T>(length, pinned: true);
        s_table.AddOrUpdate(array, null);
        Volatile.Write(ref Allocated.Any, 1);
        return array;
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
